/**
 * The one e-mail normalisation (issue 26): what an account is looked up by (`users.email_key`,
 * migration 0025) and what failed sign-ins are counted under (lib/auth/throttle.ts). Two spellings
 * that reach the same account always share one throttle bucket, because both are this function.
 *
 * It is computed here, in JavaScript, and stored; the database never recomputes it with `lower()`,
 * whose answer depends on the server's locale (with `C` it lower-cases ASCII only; PostgreSQL's
 * `lower('İ')` is `i` where JavaScript's is `i̇`), which is how `admİn@acme.test` once found the
 * admin while counting its failures elsewhere. For ASCII addresses the database fills the key
 * itself (migration 0025's trigger: trimmed and A-Z lower-cased, the same thing for ASCII); any
 * other address must be written with its key from here.
 *
 * Steps: trim; Unicode NFKC (full-width and other compatibility forms become plain letters, `ｓ`
 * → `s`, `ﬁ` → `fi`); a full case fold (lower, upper, lower again: `ẞ` and `ß` → `ss`, `ı` and
 * `İ` → `i`, final `ς` → `σ`); the combining dot above that lower-casing `İ` leaves behind is dropped; NFKC
 * again, since folding can un-normalise. The result is idempotent.
 */
export function normalizeEmail(value: string): string {
  return value
    .trim()
    .normalize("NFKC")
    .toLowerCase()
    .toUpperCase()
    .toLowerCase()
    .replace(/ς/g, "σ")
    .replace(/i\u0307/g, "i")
    .normalize("NFKC");
}
