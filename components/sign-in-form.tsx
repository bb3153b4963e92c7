"use client";
import { useState } from "react";
import { THROTTLED_ERROR, signInErrorText } from "@/lib/auth/sign-in-messages";

/**
 * Posts to next-auth's credentials callback itself rather than through
 * `signIn()` from next-auth/react, which cannot report a 429: the form shows
 * the throttle and its Retry-After.
 */
async function postCredentials(email: string, password: string, callbackUrl: string): Promise<{ ok: true } | { ok: false; error: string; retryAfter: number | null }> {
  const { csrfToken } = (await (await fetch("/api/auth/csrf")).json()) as { csrfToken: string };
  const res = await fetch("/api/auth/callback/credentials", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", "X-Auth-Return-Redirect": "1" },
    body: new URLSearchParams({ email, password, csrfToken, callbackUrl, json: "true" }),
  });
  if (res.status === 429) {
    const retryAfter = Number(res.headers.get("Retry-After"));
    return { ok: false, error: THROTTLED_ERROR, retryAfter: Number.isFinite(retryAfter) ? retryAfter : null };
  }
  const data = (await res.json().catch(() => ({}))) as { url?: string };
  const error = data.url ? new URL(data.url, window.location.href).searchParams.get("error") : "CredentialsSignin";
  return res.ok && !error ? { ok: true } : { ok: false, error: error ?? "CredentialsSignin", retryAfter: null };
}

export function SignInForm({ callbackUrl, initialError }: { callbackUrl: string; initialError: string | null }) {
  const [error, setError] = useState(initialError);
  const [pending, setPending] = useState(false);

  async function submit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(null);
    const result = await postCredentials(String(form.get("email")), String(form.get("password")), callbackUrl).catch(() => ({ ok: false as const, error: "CredentialsSignin", retryAfter: null }));
    if (result.ok) {
      window.location.assign(callbackUrl);
    } else {
      setPending(false);
      setError(signInErrorText(result.error, result.retryAfter));
    }
  }

  return (
    <form onSubmit={submit} className="card" aria-label="Sign in">
      <div className="field">
        <label htmlFor="email">Email</label>
        <input id="email" name="email" type="email" autoComplete="username" required defaultValue="admin@acme.test" />
      </div>
      <div className="field">
        <label htmlFor="password">Password</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required />
      </div>
      {error && <p className="error-box" role="alert">{error}</p>}
      <button className="button primary" type="submit" disabled={pending}>{pending ? "Signing in…" : "Sign in"}</button>
    </form>
  );
}
