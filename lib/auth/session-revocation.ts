import "server-only";
import crypto from "node:crypto";
import { getDb } from "@/lib/db/client";

/**
 * Server-side sign-out for the stateless session cookies (migration 0019). Each sign-in gets a
 * random session id, kept in the cookie's claims across refreshes; signing out records it, and
 * every request (on any replica) refuses a recorded id. So a copied cookie dies with the sign-out,
 * not 12 hours later. On both engines the record lives in the database, not in a process.
 */

/** How long a session cookie lives without a refresh (next-auth `session.maxAge`). */
export const SESSION_MAX_AGE_SECONDS = 12 * 60 * 60;

export function newSessionId(): string {
  return crypto.randomUUID();
}

/**
 * Records a session as signed out. The record is kept for one session lifetime: a revoked session
 * can no longer be refreshed (the jwt callback refuses it), so no cookie of it outlives that.
 */
export async function revokeSession(sessionId: string): Promise<void> {
  const { system } = await getDb();
  await system.query(
    `INSERT INTO quarry_revoked_sessions (session_id, expires_at) VALUES ($1, now() + make_interval(secs => $2))
     ON CONFLICT (session_id) DO NOTHING`,
    [sessionId, SESSION_MAX_AGE_SECONDS],
  );
  // Housekeeping on the (rare) sign-out path, not on the per-request check.
  await system.query("DELETE FROM quarry_revoked_sessions WHERE expires_at < now()");
}

/** Whether the session was signed out: one primary-key probe. */
export async function isSessionRevoked(sessionId: string): Promise<boolean> {
  const { system } = await getDb();
  const rows = await system.query("SELECT 1 FROM quarry_revoked_sessions WHERE session_id = $1", [sessionId]);
  return rows.length > 0;
}
