"use client";

import { useState } from "react";
import { ApiClientError, callApi, type ResponseOf } from "@/components/api-client";
import type { Role } from "@/lib/access/roles";
import { deleteSsoSettings, saveSsoSettings, type getSsoSettings } from "@/lib/sso/contract";

type Settings = ResponseOf<typeof getSsoSettings>;
interface Mapping {
  value: string;
  role: Role;
  location_ids: string[];
}

const ROLES: Role[] = ["admin", "general_manager", "analyst"];
const message = (error: unknown) => (error instanceof ApiClientError ? error.message : "The server could not be reached");

/** The organization's OpenID Connect settings; the client secret is write-only (left empty, the stored one stays). */
export function SsoAdmin({ initial, admins, locations }: { initial: Settings | null; admins: { id: string; label: string }[]; locations: { id: string; name: string }[] }) {
  const [saved, setSaved] = useState(initial);
  const [issuer, setIssuer] = useState(initial?.issuer_url ?? "");
  const [clientId, setClientId] = useState(initial?.client_id ?? "");
  const [secret, setSecret] = useState("");
  const [domains, setDomains] = useState(initial?.domains.join(", ") ?? "");
  const [roleClaim, setRoleClaim] = useState(initial?.role_claim ?? "groups");
  const [mappings, setMappings] = useState<Mapping[]>(initial?.role_mappings ?? []);
  const [defaultRole, setDefaultRole] = useState<Role | "">(initial?.default_role ?? "");
  const [ssoOnly, setSsoOnly] = useState(initial?.sso_only ?? false);
  const [breakGlass, setBreakGlass] = useState<string[]>(initial?.break_glass_user_ids ?? []);
  const [enabled, setEnabled] = useState(initial?.enabled ?? true);
  const [note, setNote] = useState<{ kind: "ok" | "error"; text: string } | null>(null);
  const [pending, setPending] = useState(false);

  const setMapping = (i: number, change: Partial<Mapping>) => setMappings((all) => all.map((m, j) => (j === i ? { ...m, ...change } : m)));

  async function save(event: React.FormEvent) {
    event.preventDefault();
    setPending(true);
    setNote(null);
    try {
      const body = {
        issuer_url: issuer.trim(),
        client_id: clientId.trim(),
        ...(secret ? { client_secret: secret } : {}),
        domains: domains.split(/[\s,]+/).filter(Boolean),
        role_claim: roleClaim.trim(),
        role_mappings: mappings,
        default_role: defaultRole || null,
        sso_only: ssoOnly,
        break_glass_user_ids: breakGlass,
        enabled,
      };
      setSaved(await callApi(saveSsoSettings, { body }));
      setSecret("");
      setNote({ kind: "ok", text: "Saved. The next sign-in uses these settings." });
    } catch (error) {
      setNote({ kind: "error", text: message(error) });
    } finally {
      setPending(false);
    }
  }

  async function remove() {
    if (!window.confirm("Remove single sign-on? Members sign in with passwords again.")) return;
    try {
      await callApi(deleteSsoSettings);
      setSaved(null);
      setNote({ kind: "ok", text: "Single sign-on removed." });
    } catch (error) {
      setNote({ kind: "error", text: message(error) });
    }
  }

  return (
    <form className="card" aria-label="Single sign-on settings" onSubmit={save}>
      {note && (
        <p className={note.kind === "error" ? "error-box" : "muted"} role={note.kind === "error" ? "alert" : "status"}>
          {note.text}
        </p>
      )}
      <div className="field">
        <label htmlFor="sso-issuer">Issuer URL</label>
        <input id="sso-issuer" type="url" required value={issuer} onChange={(e) => setIssuer(e.target.value)} placeholder="https://login.example.com/realms/acme" />
      </div>
      <div className="field">
        <label htmlFor="sso-client-id">Client ID</label>
        <input id="sso-client-id" required value={clientId} onChange={(e) => setClientId(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="sso-client-secret">Client secret</label>
        <input id="sso-client-secret" type="password" autoComplete="off" value={secret} onChange={(e) => setSecret(e.target.value)} required={!saved} placeholder={saved ? "Stored; leave empty to keep it" : ""} />
      </div>
      <div className="field">
        <label htmlFor="sso-domains">E-mail domains</label>
        <input id="sso-domains" required value={domains} onChange={(e) => setDomains(e.target.value)} placeholder="acme.com, acme.co.uk" />
      </div>
      <div className="field">
        <label htmlFor="sso-claim">Role claim</label>
        <input id="sso-claim" value={roleClaim} onChange={(e) => setRoleClaim(e.target.value)} />
      </div>
      <fieldset>
        <legend>Role mappings (the highest matching role wins)</legend>
        {mappings.map((m, i) => (
          <div key={i} className="row" data-testid={`sso-mapping-${i}`}>
            <input aria-label="Claim value" value={m.value} onChange={(e) => setMapping(i, { value: e.target.value })} placeholder="quarry-admins" />
            <select aria-label="Role" value={m.role} onChange={(e) => setMapping(i, { role: e.target.value as Role })}>
              {ROLES.map((r) => (
                <option key={r} value={r}>{r.replace("_", " ")}</option>
              ))}
            </select>
            <select aria-label="Locations" multiple value={m.location_ids} onChange={(e) => setMapping(i, { location_ids: [...e.target.selectedOptions].map((o) => o.value) })}>
              {locations.map((l) => (
                <option key={l.id} value={l.id}>{l.name}</option>
              ))}
            </select>
            <button type="button" className="link-button" onClick={() => setMappings((all) => all.filter((_, j) => j !== i))}>Remove</button>
          </div>
        ))}
        <button type="button" className="button" onClick={() => setMappings((all) => [...all, { value: "", role: "analyst", location_ids: [] }])}>Add mapping</button>
        <p className="muted">No location selected: every location.</p>
      </fieldset>
      <div className="field">
        <label htmlFor="sso-default-role">When no mapping matches</label>
        <select id="sso-default-role" value={defaultRole} onChange={(e) => setDefaultRole(e.target.value as Role | "")}>
          <option value="">Refuse the sign-in</option>
          {ROLES.map((r) => (
            <option key={r} value={r}>{`${r.replace("_", " ")}, every location`}</option>
          ))}
        </select>
      </div>
      <label>
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
      </label>
      <label>
        <input type="checkbox" checked={ssoOnly} onChange={(e) => setSsoOnly(e.target.checked)} /> SSO only: refuse password sign-in, except for the break-glass admins
      </label>
      {ssoOnly && (
        <fieldset>
          <legend>Break-glass admins (keep their password)</legend>
          {admins.map((a) => (
            <label key={a.id}>
              <input
                type="checkbox"
                checked={breakGlass.includes(a.id)}
                onChange={(e) => setBreakGlass((ids) => (e.target.checked ? [...ids, a.id] : ids.filter((id) => id !== a.id)))}
              />{" "}
              {a.label}
            </label>
          ))}
        </fieldset>
      )}
      <div className="row">
        <button className="button primary" type="submit" disabled={pending}>{pending ? "Checking the issuer…" : "Save"}</button>
        {saved && <button type="button" className="button" onClick={() => void remove()}>Remove single sign-on</button>}
      </div>
    </form>
  );
}
