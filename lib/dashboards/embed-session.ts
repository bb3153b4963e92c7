/**
 * An embed's life in its partner's page (issue 27 §4), framework-free so the browser and tests
 * share it. The iframe tells the page that framed it, and only an origin the embed grant allows
 * (allowed_origins), that its token is about to expire or has expired; that page may answer with a
 * fresh token from its own back end, which the iframe accepts from that origin only, verifies with
 * the server (a query under the new token) and then uses without reloading. docs/embedding.md.
 */

export const EMBED_MESSAGES = {
  expiring: "quarry:token-expiring",
  expired: "quarry:token-expired",
  token: "quarry:token",
} as const;

/** What the iframe posts to its parent. */
export type EmbedNotice =
  | { type: typeof EMBED_MESSAGES.expiring; embed_id: string; expires_at: string }
  | { type: typeof EMBED_MESSAGES.expired; embed_id: string; expires_at: string; reason: string };

/** What the embed page knows of its grant (never the token's secret parts: the token is in the URL already). */
export interface EmbedSession {
  embedId: string;
  dashboardId: string;
  version: number;
  /** ISO instant. */
  expiresAt: string;
  /** Partner origins allowed to frame it: the only ones it talks to. None: it posts nothing and accepts no token. */
  allowedOrigins: string[];
  /** The report downloads the dashboard's current published manifest offers (a format is offered when its shown version offers it too). */
  downloads: { pdf: boolean; png: boolean };
}

/** How long before expiry the iframe asks for a new token: a minute, or half of a shorter remaining life. */
export const EXPIRY_WARNING_MS = 60_000;

export function warningDelay(now: number, expiresAt: number): number {
  const left = expiresAt - now;
  return Math.max(0, left - Math.min(EXPIRY_WARNING_MS, left / 2));
}

/** A `{type: "quarry:token", token}` message's token, or null for any other message. */
export function offeredToken(data: unknown): string | null {
  if (data === null || typeof data !== "object") return null;
  const { type, token } = data as { type?: unknown; token?: unknown };
  return type === EMBED_MESSAGES.token && typeof token === "string" && token.length >= 10 && token.length <= 4000 ? token : null;
}

/** Whether a message comes from the page that frames the embed, on an origin the grant allows. */
export function fromAllowedParent(event: { origin: string; source: unknown }, parent: unknown, allowedOrigins: readonly string[]): boolean {
  return event.source === parent && allowedOrigins.includes(event.origin);
}

/**
 * When a token says it expires (its `exp`), read without verifying: only to schedule the warning.
 * The server verifies every token it is sent, expiry included. Null when it cannot be read.
 */
export function tokenExpiry(token: string): Date | null {
  const payload = token.split(".")[1];
  if (!payload) return null;
  try {
    const json = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(payload.length / 4) * 4, "="))) as { exp?: unknown };
    return typeof json.exp === "number" ? new Date(json.exp * 1000) : null;
  } catch {
    return null;
  }
}
