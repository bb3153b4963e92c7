"use client";
import { useState } from "react";
import { ApiClientError, callApi } from "@/components/api-client";
import { discoverSso } from "@/lib/sso/contract";

/**
 * Single sign-on: the e-mail address or organization names the provider (`/api/v1/sso/discover`), then
 * next-auth's sign-in route answers the provider's authorization URL (with state, nonce and the PKCE
 * challenge, their halves kept in next-auth's cookies) and the browser goes there.
 */
async function startSso(emailOrOrganization: string, callbackUrl: string): Promise<string> {
  const { provider_id } = await callApi(discoverSso, { body: { email_or_organization: emailOrOrganization } });
  const { csrfToken } = (await (await fetch("/api/auth/csrf")).json()) as { csrfToken: string };
  const res = await fetch(`/api/auth/signin/${encodeURIComponent(provider_id)}`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", "X-Auth-Return-Redirect": "1" },
    body: new URLSearchParams({ csrfToken, callbackUrl, json: "true" }),
  });
  const data = (await res.json().catch(() => ({}))) as { url?: string };
  if (!res.ok || !data.url) throw new Error("Single sign-on could not start. Try again.");
  return data.url;
}

export function SsoSignInForm({ callbackUrl }: { callbackUrl: string }) {
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function submit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const value = String(new FormData(event.currentTarget).get("sso"));
    setPending(true);
    setError(null);
    try {
      window.location.assign(await startSso(value, callbackUrl));
    } catch (failure) {
      setPending(false);
      setError(failure instanceof ApiClientError || failure instanceof Error ? failure.message : "Single sign-on could not start.");
    }
  }

  return (
    <form onSubmit={submit} className="card" aria-label="Single sign-on" style={{ marginTop: "1rem" }}>
      <div className="field">
        <label htmlFor="sso">Work e-mail or organization</label>
        <input id="sso" name="sso" type="text" autoComplete="username" required placeholder="you@company.com or acme" />
      </div>
      {error && <p className="error-box" role="alert">{error}</p>}
      <button className="button" type="submit" disabled={pending}>{pending ? "Redirecting…" : "Continue with single sign-on"}</button>
    </form>
  );
}
