/** next-auth's error code for a throttled sign-in (also the sign-in page's `?error=`). */
export const THROTTLED_ERROR = "TooManyAttempts";

/** What the sign-in page says for a next-auth error code. */
export function signInErrorText(code: string | null, retryAfterSeconds?: number | null): string | null {
  if (!code) return null;
  if (code !== THROTTLED_ERROR) return "Wrong email or password.";
  if (!retryAfterSeconds) return "Too many failed sign-ins. Try again later.";
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}
