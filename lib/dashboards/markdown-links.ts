/**
 * Link and image targets allowed in manifest markdown: web, mail, in-app paths and anchors.
 * Anything else (javascript:, data:, vbscript:, file:, bare relative paths) becomes empty, so a
 * manifest cannot smuggle script into the page through a link.
 */
export function safeUrl(url: string): string {
  // Browsers ignore control characters and spaces inside a scheme ("java\tscript:"), so the check must too.
  const compact = url.replace(/[\u0000-\u0020]/g, "");
  return /^(https?:|mailto:|\/|#)/i.test(compact) ? url.trim() : "";
}

/** Links that leave the app: opened in a new tab, without access to this page (rel=noopener). */
export function isExternal(href: string | undefined): boolean {
  return href !== undefined && /^(https?:)?\/\//i.test(href.trim());
}
