"use client";

import Link from "next/link";
import { useState } from "react";
import { ApiClientError, callApi } from "@/components/api-client";
import { acceptInvitation, completePasswordReset, requestPasswordReset, runSetup } from "@/lib/members/contract";

const message = (error: unknown) => (error instanceof ApiClientError ? error.message : "The server could not be reached");

/** One labelled input of these forms. */
export function Field(props: { id: string; label: string; value: string; onChange: (v: string) => void; type?: string; autoComplete?: string; hint?: string }) {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <input id={props.id} required type={props.type ?? "text"} autoComplete={props.autoComplete} value={props.value} onChange={(e) => props.onChange(e.target.value)} />
      {props.hint && <span className="muted">{props.hint}</span>}
    </div>
  );
}

/** Submits once, shows the server's `detail` on failure, and the done view after. */
export function useSubmit(run: () => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  async function submit(event: React.FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await run();
      setDone(true);
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, done, submit };
}

/** The first-run form: the organization, then its first admin. */
export function SetupForm({ defaultTimeZone }: { defaultTimeZone: string }) {
  const [v, setV] = useState({ organization_name: "", slug: "", time_zone: defaultTimeZone, currency: "USD", admin_name: "", admin_email: "", admin_password: "" });
  const set = (key: keyof typeof v) => (value: string) => setV({ ...v, [key]: value });
  const form = useSubmit(async () => void (await callApi(runSetup, { body: v })));
  if (form.done) {
    return (
      <div className="card" role="status">
        <h2>{v.organization_name} is ready</h2>
        <p><Link href="/signin">Sign in</Link> as {v.admin_email}, then invite your colleagues from Members.</p>
      </div>
    );
  }
  return (
    <form className="card" onSubmit={form.submit} aria-label="Set up Quarry">
      <h2>Your organization</h2>
      <Field id="setup-org-name" label="Organization name" value={v.organization_name} onChange={set("organization_name")} />
      <Field id="setup-slug" label="Short name (slug)" value={v.slug} onChange={set("slug")} hint="Lower-case letters, digits and hyphens, e.g. acme" />
      <Field id="setup-time-zone" label="Time zone" value={v.time_zone} onChange={set("time_zone")} hint="IANA name, e.g. Europe/Berlin" />
      <Field id="setup-currency" label="Currency" value={v.currency} onChange={(c) => set("currency")(c.toUpperCase())} hint="ISO 4217 code, e.g. EUR" />
      <h2>The first admin</h2>
      <Field id="setup-admin-name" label="Your name" value={v.admin_name} onChange={set("admin_name")} autoComplete="name" />
      <Field id="setup-admin-email" label="E-mail" type="email" value={v.admin_email} onChange={set("admin_email")} autoComplete="email" />
      <Field id="setup-admin-password" label="Password" type="password" value={v.admin_password} onChange={set("admin_password")} autoComplete="new-password" hint="At least 10 characters" />
      <button type="submit" className="button primary" disabled={form.busy}>Create the organization</button>
      {form.error && <div className="error-box" role="alert">{form.error}</div>}
    </form>
  );
}

/** The invitation's accept form: a name and a password. */
export function AcceptInvitationForm({ token, email }: { token: string; email: string }) {
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const form = useSubmit(async () => void (await callApi(acceptInvitation, { body: { token, name, password } })));
  if (form.done) {
    return (
      <div className="card" role="status">
        <h2>Welcome</h2>
        <p>Your account is ready. <Link href="/signin">Sign in</Link> as {email}.</p>
      </div>
    );
  }
  return (
    <form className="card" onSubmit={form.submit} aria-label="Accept the invitation">
      <Field id="accept-name" label="Your name" value={name} onChange={setName} autoComplete="name" />
      <Field id="accept-password" label="Choose a password" type="password" value={password} onChange={setPassword} autoComplete="new-password" hint="At least 10 characters" />
      <button type="submit" className="button primary" disabled={form.busy}>Join</button>
      {form.error && <div className="error-box" role="alert">{form.error}</div>}
    </form>
  );
}

/** Asks for a reset link; the answer is the same for every address. */
export function RequestResetForm() {
  const [email, setEmail] = useState("");
  const [answer, setAnswer] = useState("");
  const form = useSubmit(async () => setAnswer((await callApi(requestPasswordReset, { body: { email } })).detail));
  if (form.done) return <div className="card" role="status"><p>{answer}</p></div>;
  return (
    <form className="card" onSubmit={form.submit} aria-label="Reset your password">
      <Field id="reset-email" label="E-mail" type="email" value={email} onChange={setEmail} autoComplete="email" />
      <button type="submit" className="button primary" disabled={form.busy}>Send me a link</button>
      {form.error && <div className="error-box" role="alert">{form.error}</div>}
    </form>
  );
}

/** Sets a new password with a reset link. */
export function CompleteResetForm({ token }: { token: string }) {
  const [password, setPassword] = useState("");
  const form = useSubmit(async () => void (await callApi(completePasswordReset, { body: { token, password } })));
  if (form.done) return <div className="card" role="status"><p>Your password is changed and every session of your account ended. <Link href="/signin">Sign in</Link>.</p></div>;
  return (
    <form className="card" onSubmit={form.submit} aria-label="Choose a new password">
      <Field id="new-password" label="New password" type="password" value={password} onChange={setPassword} autoComplete="new-password" hint="At least 10 characters" />
      <button type="submit" className="button primary" disabled={form.busy}>Change password</button>
      {form.error && <div className="error-box" role="alert">{form.error}</div>}
    </form>
  );
}
