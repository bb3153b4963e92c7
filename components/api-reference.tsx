"use client";

import { useEffect, useRef, useState } from "react";
import "swagger-ui-dist/swagger-ui.css";

/*
 * Swagger UI from swagger-ui-dist's prebuilt bundle rather than swagger-ui-react: Turbopack's production
 * build of swagger-ui-react's ApiDOM modules breaks their circular imports (`TypeError: az.refract is not
 * a function` in the browser; vercel/next.js#86507, swagger-api/swagger-ui#10599), while the bundle arrives
 * already linked. It is loaded as a chunk of this page (no CDN, no inline script, so a nonce-based CSP holds).
 */

/**
 * Swagger UI renders some selects with no accessible name (the server list, an operation's media
 * types); each gets one from what it chooses. Re-applied as Swagger UI re-renders.
 */
function nameSelects(root: HTMLElement) {
  for (const select of root.querySelectorAll<HTMLSelectElement>("select:not([aria-label]):not([aria-labelledby])")) {
    // The server list's <label for="servers"> holds no text, so it names nothing.
    if (select.closest(".servers")) select.setAttribute("aria-label", "Server");
    else if (select.closest(".content-type, .response-control-media-type, .body-param-content-type")) select.setAttribute("aria-label", "Media type");
  }
}

export function ApiReference({ url }: { url: string }) {
  const container = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<"loading" | "ready" | "failed">("loading");

  useEffect(() => {
    const root = container.current;
    if (!root) return;
    const observer = new MutationObserver(() => nameSelects(root));
    observer.observe(root, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    let cancelled = false;
    import("swagger-ui-dist/swagger-ui-bundle.js")
      .then(({ default: SwaggerUIBundle }) => {
        if (cancelled || !container.current) return;
        SwaggerUIBundle({
          domNode: container.current,
          url,
          // Sections start closed: Swagger UI 5 stops rendering an expanded list partway once it holds more than
          // 130 operations (only the first two sections drawn, no error; measured on this document and on the bare
          // bundle), while closed sections each open in full.
          docExpansion: "none",
          defaultModelsExpandDepth: 0,
          persistAuthorization: true,
          tryItOutEnabled: false,
          deepLinking: false,
          // No call to the online validator: the page works offline and talks only to its own origin (CSP connect-src).
          validatorUrl: null,
        });
        setState("ready");
      })
      .catch(() => !cancelled && setState("failed"));
    return () => {
      cancelled = true;
    };
  }, [url]);

  return (
    <div className="api-reference" data-testid="api-reference" data-state={state}>
      {state === "loading" && <p className="muted">Loading the API reference…</p>}
      {state === "failed" && (
        <p className="error-box" role="alert">
          The API reference could not be loaded; the document itself is at <a href={url}>{url}</a>.
        </p>
      )}
      <div ref={container} />
    </div>
  );
}
