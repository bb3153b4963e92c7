/** next-auth's error code for a throttled sign-in (also the sign-in page's `?error=`). */
export const THROTTLED_ERROR = "TooManyAttempts";

/** The sign-in page's `?error=` for any refused single sign-on (lib/sso/sign-in.ts): one code, one sentence. */
export const SSO_REFUSED_ERROR = "SsoRefused";

/** next-auth's codes for a failed OAuth round trip (state, PKCE, nonce, token or ID token refused, provider unreachable). */
const SSO_FAILURES = new Set(["OAuthSignin", "OAuthCallback", "OAuthCreateAccount", "Callback", "OAuthAccountNotLinked", "AccessDenied"]);

/** What the sign-in page says for a next-auth error code. */
export function signInErrorText(code: string | null, retryAfterSeconds?: number | null): string | null {
  if (!code) return null;
  // One sentence for every refusal: it never tells whether, or where, the address has an account.
  if (code === SSO_REFUSED_ERROR) return "Single sign-on could not let you in. Ask your organization's admin for access.";
  if (SSO_FAILURES.has(code)) return "Single sign-on did not complete. Start again.";
  if (code !== THROTTLED_ERROR) return "Wrong email or password.";
  if (!retryAfterSeconds) return "Too many failed sign-ins. Try again later.";
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}
