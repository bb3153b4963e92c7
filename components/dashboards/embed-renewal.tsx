"use client";

import { useEffect, useState } from "react";
import { ApiClientError, callApi } from "@/components/api-client";
import { queryEmbed } from "@/lib/dashboards/contract";
import { EMBED_MESSAGES, fromAllowedParent, offeredToken } from "@/lib/dashboards/embed-session";
import styles from "./dashboards.module.css";

export interface EmbedRenewalProps {
  token: string;
  reason: string;
  embedId: string;
  expiresAt: string;
  allowedOrigins: string[];
}

/**
 * An embed whose link had already expired when the frame loaded (issue 44 §8): instead of ending at an error page,
 * it tells its framing page, on the grant's partner origins only, as a running embed does at expiry, and opens the
 * fresh token that page answers with once the server has accepted it.
 */
export function EmbedRenewal({ token, reason, embedId, expiresAt, allowedOrigins }: EmbedRenewalProps) {
  const [refused, setRefused] = useState<string | null>(null);

  useEffect(() => {
    if (window.parent === window) return;
    for (const origin of allowedOrigins) window.parent.postMessage({ type: EMBED_MESSAGES.expired, embed_id: embedId, expires_at: expiresAt, reason }, origin);
    const onMessage = async (event: MessageEvent) => {
      if (!fromAllowedParent(event, window.parent, allowedOrigins)) return;
      const offered = offeredToken(event.data);
      if (!offered || offered === token) return;
      try {
        // Checked before the frame moves to it, so a partner answering with another dead link cannot make it loop.
        await callApi(queryEmbed, { body: { token: offered, filters: {}, widget_ids: [] } });
        window.location.replace(`/embed/${encodeURIComponent(offered)}${window.location.search}${window.location.hash}`);
      } catch (error) {
        setRefused(error instanceof ApiClientError ? error.message : "The new link could not be checked");
      }
    };
    window.addEventListener("message", onMessage);
    return () => window.removeEventListener("message", onMessage);
  }, [token, reason, embedId, expiresAt, allowedOrigins]);

  return (
    <div className={styles.errorPage} role="alert" data-testid="embed-renewal">
      <h1>{reason}</h1>
      <p>Waiting for the page that shows this dashboard to renew the link.</p>
      {refused && <p data-testid="embed-renewal-refused">The new link was not accepted: {refused}</p>}
    </div>
  );
}
