"use client";

import { useState } from "react";
import { ApiClientError, callApi, type ResponseOf } from "@/components/api-client";
import { useApiRead } from "@/components/api-hooks";
import { ApiKeyScope } from "@/lib/access/api-key-scopes";
import { createApiKey, listApiKeys, revokeApiKey } from "@/lib/auth/api-keys-contract";
import { PageNote } from "@/components/page-note";
import { useOrgTimeZone } from "@/components/org-time-zone";
import { formatInstant } from "@/lib/dashboards/format";

type KeyList = ResponseOf<typeof listApiKeys>;

const SCOPE_HELP: Record<ApiKeyScope, string> = {
  "dashboards:read": "list, read and query dashboards",
  "dashboards:write": "create, change and delete dashboards",
  "dashboards:publish": "publish dashboards",
  "embeds:write": "create and revoke embeds",
  "documents:read": "list, read, download and search documents; chat",
  "documents:write": "create, upload, index and delete documents",
  "data:write": "load tables (uploads, ingest batches) and manage pulls",
};

const message = (error: unknown) => (error instanceof ApiClientError ? error.message : "The server could not be reached");

/** The organization's API keys: create one (shown once), list them, revoke. */
export function ApiKeysAdmin({ initialKeys, locations, listPage }: { initialKeys: KeyList; locations: { id: string; name: string }[]; listPage: { limit: number; offset: number } }) {
  const keys = useApiRead(listApiKeys, { query: listPage }, { fallbackData: initialKeys });
  // The same text on the server and in the browser: the organization's zone, named.
  const timeZone = useOrgTimeZone();
  const when = (iso: string | null) => formatInstant(iso, timeZone);
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<ApiKeyScope[]>(["dashboards:read"]);
  const [scoped, setScoped] = useState<string[]>([]);
  const [expires, setExpires] = useState("");
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function create(event: React.FormEvent) {
    event.preventDefault();
    setBusy(true);
    setStatus(null);
    try {
      const made = await callApi(createApiKey, {
        body: { name, scopes, location_ids: scoped.length > 0 ? scoped : null, expires_at: expires ? new Date(`${expires}T23:59:59`).toISOString() : null },
      });
      setCreated({ name: made.name, key: made.key });
      setName("");
      await keys.mutate();
    } catch (error) {
      setStatus(message(error));
    } finally {
      setBusy(false);
    }
  }

  async function revoke(id: string, keyName: string) {
    if (!window.confirm(`Revoke the key "${keyName}"? Anything using it is refused from its next request.`)) return;
    try {
      await callApi(revokeApiKey, { params: { id } });
      await keys.mutate();
    } catch (error) {
      setStatus(message(error));
    }
  }

  const list = keys.data ?? initialKeys;
  const locationName = new Map(locations.map((l) => [l.id, l.name]));
  return (
    <>
      {created && (
        <div className="card" role="status" style={{ marginBottom: "1rem" }} data-testid="new-api-key">
          <h2>Key &quot;{created.name}&quot; created</h2>
          <p>Copy it now: it is not shown again.</p>
          <p>
            <code style={{ wordBreak: "break-all" }}>{created.key}</code>{" "}
            <button type="button" className="link-button" onClick={() => void navigator.clipboard?.writeText(created.key)}>Copy</button>{" "}
            <button type="button" className="link-button" onClick={() => setCreated(null)}>Done</button>
          </p>
        </div>
      )}
      <form className="card" style={{ marginBottom: "1rem" }} onSubmit={create} aria-label="Create an API key">
        <h2>New key</h2>
        <div className="field">
          <label htmlFor="api-key-name">Name</label>
          <input id="api-key-name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} placeholder="CI deploy" />
        </div>
        <fieldset className="field">
          <legend>Scopes</legend>
          {ApiKeyScope.options.map((scope) => (
            <label key={scope}>
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) => setScopes(e.target.checked ? [...scopes, scope] : scopes.filter((s) => s !== scope))}
              />{" "}
              <code>{scope}</code> <span className="muted">{SCOPE_HELP[scope]}</span>
            </label>
          ))}
        </fieldset>
        <div className="field">
          <label htmlFor="api-key-locations">Locations (none selected: every location you see)</label>
          <select id="api-key-locations" multiple value={scoped} onChange={(e) => setScoped([...e.target.selectedOptions].map((o) => o.value))}>
            {locations.map((l) => (
              <option key={l.id} value={l.id}>{l.name}</option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="api-key-expires">Expires (optional, end of that day)</label>
          <input id="api-key-expires" type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
        </div>
        <button type="submit" className="button primary" disabled={busy || !name.trim() || scopes.length === 0}>Create key</button>
        {status && <div className="error-box" role="alert">{status}</div>}
      </form>
      <table className="grid-table" aria-label="API keys">
        <thead>
          <tr>
            <th>Name</th>
            <th>Key</th>
            <th>Scopes</th>
            <th>Locations</th>
            <th>Expires</th>
            <th>Last used</th>
            <th>Created</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.items.length === 0 && (
            <tr>
              <td colSpan={8} className="muted">No API keys yet.</td>
            </tr>
          )}
          {list.items.map((k) => (
            <tr key={k.id}>
              <td>{k.name}</td>
              <td><code>{k.prefix}…</code></td>
              <td>{k.scopes.join(", ")}</td>
              <td>{k.location_ids ? k.location_ids.map((id) => locationName.get(id) ?? id).join(", ") : "every location"}</td>
              <td>{k.expires_at ? when(k.expires_at) : "never"}</td>
              <td>{when(k.last_used_at)}</td>
              <td>{when(k.created_at)} <span className="muted">by {k.created_by_name ?? "a former member"}</span></td>
              <td>
                {k.revoked_at ? (
                  <span className="chip bad">revoked {when(k.revoked_at)}</span>
                ) : (
                  <button type="button" className="button danger" onClick={() => void revoke(k.id, k.name)}>Revoke</button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <PageNote page={list} what="keys" />
    </>
  );
}
