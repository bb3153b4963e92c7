/**
 * This page's CSP nonce, as the browser exposes it to scripts on the elements Next.js stamped
 * (the `nonce` property; the attribute itself reads empty). "" during server rendering.
 */
export function pageNonce(): string {
  if (typeof document === "undefined") return "";
  return document.querySelector<HTMLScriptElement>("script[nonce]")?.nonce ?? "";
}
