"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import { ApiClientError, callApi } from "@/components/api-client";
import { queryEmbed } from "@/lib/dashboards/contract";
import { EMBED_MESSAGES, type EmbedNotice, type EmbedSession, fromAllowedParent, offeredToken, tokenExpiry, warningDelay } from "@/lib/dashboards/embed-session";
import { OfferedDownloads } from "@/components/reports/download-report";
import { DashboardView, type DashboardViewProps } from "./dashboard-view";
import styles from "./interactions.module.css";

export interface EmbedViewProps extends Omit<DashboardViewProps, "target" | "onQueryError"> {
  token: string;
  session: EmbedSession;
}

/**
 * A dashboard in a partner's iframe whose token expires (issue 27 §4). When the token expires (its
 * time passes, or the server answers 401 on a re-query) one banner says so and every widget keeps
 * what it shows, instead of an error box per widget. The iframe tells the framing page before and
 * at expiry (postMessage to the grant's allowed origins only) and takes a fresh token from that
 * page, checked by the server before it is used; the page is not reloaded.
 */
export function EmbedView({ token: initialToken, session, ...view }: EmbedViewProps) {
  const [token, setToken] = useState(initialToken);
  const [expiresAt, setExpiresAt] = useState(session.expiresAt);
  // Why the link stopped working (the server's words), or null while it works.
  const [ended, setEnded] = useState<string | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const told = useRef<string | null>(null);
  const { embedId, dashboardId, version, allowedOrigins } = session;

  const post = useCallback(
    (notice: EmbedNotice) => {
      if (window.parent === window) return;
      // A targetOrigin per allowed origin: the browser delivers only to the one the parent is on.
      for (const origin of allowedOrigins) window.parent.postMessage(notice, origin);
    },
    [allowedOrigins],
  );

  const end = useCallback(
    (reason: string) => {
      setEnded(reason);
      if (told.current === expiresAt) return;
      told.current = expiresAt;
      post({ type: EMBED_MESSAGES.expired, embed_id: embedId, expires_at: expiresAt, reason });
    },
    [embedId, expiresAt, post],
  );

  useEffect(() => {
    const now = Date.now();
    const at = Date.parse(expiresAt);
    const warn = setTimeout(() => post({ type: EMBED_MESSAGES.expiring, embed_id: embedId, expires_at: expiresAt }), warningDelay(now, at));
    // setTimeout holds at most 2^31-1 ms (24.8 days); a longer wait would fire at once.
    const expire = at - now < 2 ** 31 ? setTimeout(() => end("This embed link has expired"), Math.max(0, at - now)) : undefined;
    return () => {
      clearTimeout(warn);
      clearTimeout(expire);
    };
  }, [embedId, expiresAt, post, end]);

  const renew = useCallback(
    async (offered: string) => {
      try {
        // Verified as usual: the server checks signature, expiry, revocation and allow_embed; computing no widget.
        const answer = await callApi(queryEmbed, { body: { token: offered, filters: {}, widget_ids: [] } });
        if (answer.dashboard_id !== dashboardId || answer.version !== version) {
          // Another dashboard or version: its layout is not this one, so it opens as its own page.
          window.location.replace(`/embed/${encodeURIComponent(offered)}${window.location.search}`);
          return;
        }
        setToken(offered);
        setExpiresAt((tokenExpiry(offered) ?? new Date(Date.now() + 60_000)).toISOString());
        setEnded(null);
        setRefused(null);
        // A reload of the frame keeps working with the new token.
        window.history.replaceState(null, "", `/embed/${encodeURIComponent(offered)}${window.location.search}${window.location.hash}`);
      } catch (error) {
        setRefused(error instanceof ApiClientError ? error.message : "The new link could not be checked");
      }
    },
    [dashboardId, version],
  );

  useEffect(() => {
    const onMessage = (event: MessageEvent) => {
      if (!fromAllowedParent(event, window.parent, allowedOrigins)) return;
      const offered = offeredToken(event.data);
      if (offered && offered !== token) void renew(offered);
    };
    window.addEventListener("message", onMessage);
    return () => window.removeEventListener("message", onMessage);
  }, [allowedOrigins, renew, token]);

  const onQueryError = useCallback(
    (error: unknown) => {
      if (!(error instanceof ApiClientError) || error.status !== 401) return false;
      end(typeof error.detail === "string" ? error.detail : "This embed link is no longer valid");
      return true;
    },
    [end],
  );

  return (
    <>
      {ended && (
        <div className={styles.banner} role="alert" data-testid="embed-expired">
          <strong>{ended}.</strong>
          <span>The figures shown are from before; they update again once the page that shows this dashboard renews the link.</span>
          {refused && <span data-testid="embed-renewal-refused">The new link was not accepted: {refused}</span>}
        </div>
      )}
      <OfferedDownloads
        target={{ kind: "embed", token }}
        offered={{ pdf: session.downloads.pdf && view.view.manifest.platform.downloads.pdf, png: session.downloads.png && view.view.manifest.platform.downloads.png }}
      />
      <DashboardView {...view} target={{ kind: "embed", token }} onQueryError={onQueryError} />
    </>
  );
}
