import "server-only";
import crypto from "node:crypto";
import { countHit, forgetCount, forgetCounts, readCounts } from "@/lib/db/counters";
import { normalizeEmail } from "./email";
export { THROTTLED_ERROR } from "./sign-in-messages";

/** Sign-in keys among the shared counters. */
const PREFIX = "sign-in ";

/**
 * Failed sign-in throttling, shared by every replica (the shared counters, lib/db/counters.ts).
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
  // The account is the e-mail as sign-in looks it up (lib/auth/email.ts): every spelling that finds one user counts in one bucket.
  const digest = crypto.createHash("sha256").update(normalizeEmail(subject.email)).digest("hex");
  return { account: `${PREFIX}account:${digest}`, address: `${PREFIX}address:${subject.address}` };
}

/** Seconds until the subject may try again, or 0 when neither its account nor its address is throttled. */
export async function signInRetryAfter(subject: SignInSubject, now = new Date()): Promise<number> {
  const keys = keysOf(subject);
  const counts = await readCounts([keys.account, keys.address], now);
  let wait = 0;
  for (const [key, limit] of [[keys.account, SIGN_IN_LIMITS.account], [keys.address, SIGN_IN_LIMITS.address]] as const) {
    const count = counts.get(key);
    if (count && count.hits >= limit.failures) wait = Math.max(wait, count.secondsLeft);
  }
  return wait;
}

/** Counts one failed attempt against the account and the address (a new window once the old one ended). */
export async function recordSignInFailure(subject: SignInSubject, now = new Date()): Promise<void> {
  const keys = keysOf(subject);
  await countHit(keys.account, SIGN_IN_LIMITS.account.windowSeconds, now);
  await countHit(keys.address, SIGN_IN_LIMITS.address.windowSeconds, now);
}

/** A successful sign-in clears its account's failures (not the address's: one known password must not reset guessing at others). */
export async function clearSignInFailures(email: string): Promise<void> {
  await forgetCount(keysOf({ email, address: "" }).account);
}

/** Forgets every failed sign-in (benchmarks, tests). */
export async function resetSignInThrottle(): Promise<void> {
  await forgetCounts(PREFIX);
}
