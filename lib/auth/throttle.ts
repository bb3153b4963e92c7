import "server-only";
import crypto from "node:crypto";
import { getDb } from "@/lib/db/client";
export { THROTTLED_ERROR } from "./sign-in-messages";

/**
 * Failed sign-in throttling, shared by every replica (table sign_in_throttle).
 * Only failures count, so a user who signs in often is never slowed; an
 * account is also throttled across addresses, so guessing from many
 * addresses gains nothing.
 */
export const SIGN_IN_LIMITS = {
  account: { failures: 5, windowSeconds: 15 * 60 },
  address: { failures: 20, windowSeconds: 15 * 60 },
} as const;

export interface SignInSubject {
  email: string;
  address: string;
}

function keysOf(subject: SignInSubject) {
  const digest = crypto.createHash("sha256").update(subject.email.trim().toLowerCase()).digest("hex");
  return { account: `account:${digest}`, address: `address:${subject.address}` };
}

/** Seconds until the subject may try again, or 0 when neither its account nor its address is throttled. */
export async function signInRetryAfter(subject: SignInSubject, now = new Date()): Promise<number> {
  const keys = keysOf(subject);
  const { system } = await getDb();
  const rows = await system.query<{ key: string; failures: number; windowStartedAt: Date | string }>(
    `SELECT key, failures, window_started_at AS "windowStartedAt" FROM sign_in_throttle WHERE key = $1 OR key = $2`,
    [keys.account, keys.address],
  );
  let wait = 0;
  for (const row of rows) {
    const limit = row.key === keys.account ? SIGN_IN_LIMITS.account : SIGN_IN_LIMITS.address;
    const endsAt = new Date(row.windowStartedAt).getTime() + limit.windowSeconds * 1000;
    if (row.failures >= limit.failures && endsAt > now.getTime()) wait = Math.max(wait, Math.ceil((endsAt - now.getTime()) / 1000));
  }
  return wait;
}

/** Counts one failed attempt against the account and the address (a new window once the old one ended). */
export async function recordSignInFailure(subject: SignInSubject, now = new Date()): Promise<void> {
  const keys = keysOf(subject);
  const { system } = await getDb();
  for (const [key, limit] of [[keys.account, SIGN_IN_LIMITS.account], [keys.address, SIGN_IN_LIMITS.address]] as const) {
    await system.query(
      `INSERT INTO sign_in_throttle (key, failures, window_started_at) VALUES ($1, 1, $2::timestamptz)
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN sign_in_throttle.window_started_at <= $2::timestamptz - make_interval(secs => $3::double precision) THEN 1 ELSE sign_in_throttle.failures + 1 END,
         window_started_at = CASE WHEN sign_in_throttle.window_started_at <= $2::timestamptz - make_interval(secs => $3::double precision) THEN $2::timestamptz ELSE sign_in_throttle.window_started_at END`,
      [key, now.toISOString(), limit.windowSeconds],
    );
  }
}

/** A successful sign-in clears its account's failures (not the address's: one known password must not reset guessing at others). */
export async function clearSignInFailures(email: string): Promise<void> {
  const { system } = await getDb();
  await system.query(`DELETE FROM sign_in_throttle WHERE key = $1`, [keysOf({ email, address: "" }).account]);
}
