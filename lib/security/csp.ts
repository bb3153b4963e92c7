import { imageSources } from "./image-origins";

/**
 * The Content-Security-Policy of every page. Scripts run only with the request's nonce (Next.js
 * reads it from this header and stamps its own scripts) or when loaded by such a script
 * ('strict-dynamic'): no 'unsafe-inline' for scripts, so an injected `<img onerror>` or inline
 * handler never runs. Pages only talk to their own origin (connect-src 'self').
 *
 * Styles (issue 26 §7): `<style>` elements and stylesheets only from this origin or with the nonce
 * (`style-src-elem`; CodeMirror's style modules get it through EditorView.cspNonce), so injected
 * markup cannot restyle a page. Style *attributes* stay allowed (`style-src-attr 'unsafe-inline'`):
 * React's server-rendered `style` props (the grid's areas among them), ECharts' tooltips and
 * Tabulator's cells set them, and an attribute can only style, never load anything (url() in it is
 * bound by img-src). `style-src` repeats the element rule for browsers without the two split
 * directives (Safari before 15.4, Firefox before 108): there style attributes are blocked too.
 *
 * Images (issue 26 §7): this origin, data: and blob: URLs, and the origins the page's organization
 * lists (organization settings, migration 0030), never any http(s) address: an image widget's
 * `//host/x.png` made every embed viewer's browser call a third party.
 */
export interface CspOptions {
  nonce: string;
  /** frame-ancestors sources: "'none'" for app pages, the grant's partner origins for embeds. */
  frameAncestors: string;
  /** Image origins of the page's organization (none: only this origin and data:/blob: URLs). */
  imageOrigins?: readonly string[];
  /** Development needs eval for React's debugging aids and inline styles for its overlay; production never does. */
  dev?: boolean;
}

export function contentSecurityPolicy({ nonce, frameAncestors, imageOrigins = [], dev = false }: CspOptions): string {
  const styleElements = dev ? "'self' 'unsafe-inline'" : `'self' 'nonce-${nonce}'`;
  return [
    "default-src 'self'",
    `script-src 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    `style-src ${styleElements}`,
    `style-src-elem ${styleElements}`,
    "style-src-attr 'unsafe-inline'",
    `img-src ${imageSources(imageOrigins)}`,
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
