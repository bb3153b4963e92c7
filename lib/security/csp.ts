/**
 * The Content-Security-Policy of every page. Scripts run only with the request's nonce (Next.js
 * reads it from this header and stamps its own scripts) or when loaded by such a script
 * ('strict-dynamic'): no 'unsafe-inline' for scripts, so an injected `<img onerror>` or inline
 * handler never runs. Styles allow inline attributes, which React's `style` props and ECharts'
 * tooltips need; a nonce is deliberately absent from style-src because it would disable
 * 'unsafe-inline' there. Pages only talk to their own origin (connect-src 'self').
 */
export interface CspOptions {
  nonce: string;
  /** frame-ancestors sources: "'none'" for app pages, the grant's partner origins for embeds. */
  frameAncestors: string;
  /** Development needs eval for React's debugging aids; production never does. */
  dev?: boolean;
}

export function contentSecurityPolicy({ nonce, frameAncestors, dev = false }: CspOptions): string {
  return [
    "default-src 'self'",
    `script-src 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    // Image widgets show any http(s) image a manifest names; images cannot run script.
    "img-src 'self' data: blob: https: http:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${frameAncestors}`,
  ].join("; ");
}

/** A fresh, unguessable nonce per request (128 bits, base64). */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}
