import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { isOrganizationAdmin } from "@/lib/access/roles";
import { currentPagePrincipal } from "@/lib/auth/session";
import { listAuditActors } from "@/lib/audit-log/audit-log";
import { AUDIT_ACTIONS, AUDIT_TARGET_KINDS, type AuditAction } from "@/lib/audit/actions";
import { listAudit } from "@/lib/audit-log/operations";
import type { AuditEventView } from "@/lib/audit-log/contract";
import { Invalid } from "@/lib/errors";
import { invoke } from "@/lib/operation";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Audit log" };

type SearchParams = Record<string, string | string[] | undefined>;
const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) || undefined;

/** The page's date inputs are whole days in UTC; the API takes instants: `to` is the end of its day. */
function filtersOf(params: SearchParams) {
  const from = one(params.from);
  const to = one(params.to);
  const day = /^\d{4}-\d{2}-\d{2}$/;
  return {
    actor: one(params.actor),
    action: one(params.action),
    target_kind: one(params.target_kind),
    from: from && day.test(from) ? `${from}T00:00:00Z` : from,
    to: to && day.test(to) ? new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString() : to,
  };
}

const queryString = (values: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(values).filter((e): e is [string, string] => Boolean(e[1]))).toString();

/** The top-level fields a change touched: what the row's summary names. */
function changedFields(event: AuditEventView): string[] {
  const before = (event.before ?? {}) as Record<string, unknown>;
  const after = (event.after ?? {}) as Record<string, unknown>;
  if (!event.before || !event.after) return [];
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
}

export default async function AuditPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin?callbackUrl=/admin/audit");
  if (!isOrganizationAdmin(principal)) {
    return (
      <div className="page">
        <h1>Audit log</h1>
        <div className="error-box" role="alert"><strong>Admins of every location only.</strong></div>
      </div>
    );
  }
  const params = await searchParams;
  const filters = filtersOf(params);
  const cursor = one(params.cursor);
  let page: { items: AuditEventView[]; next_cursor: string | null } = { items: [], next_cursor: null };
  let problem: string | null = null;
  try {
    // The address bar's text goes to the endpoint's own schema, which refuses an unknown action (shown below).
    page = await invoke(listAudit, principal, { query: { ...filters, action: filters.action as AuditAction | undefined, cursor, limit: "50" } });
  } catch (error) {
    // A filter typed into the address bar that does not parse: say which, as the API would.
    if (!(error instanceof Invalid)) throw error;
    problem = typeof error.detail === "string" ? error.detail : error.detail.map((d) => `${d.loc.slice(1).join(".")}: ${d.msg}`).join("; ");
  }
  const actors = await listAuditActors(principal);
  const shown = { actor: filters.actor, action: filters.action, target_kind: filters.target_kind, from: one(params.from), to: one(params.to) };
  const apiFilters = queryString(filters);
  return (
    <div className="page">
      <h1>Audit log</h1>
      <p className="muted">
        Every change an admin or editor of {principal.orgName} made: who, when, from which address, and what changed (secrets masked). Rows cannot be
        edited or deleted; they are kept for the configured number of days. Dates are UTC.
      </p>
      <form method="get" className="card" aria-label="Filters" style={{ display: "flex", flexWrap: "wrap", gap: "0.75rem", alignItems: "flex-end" }}>
        <label className="field">
          Actor
          <select name="actor" defaultValue={shown.actor ?? ""}>
            <option value="">Anyone</option>
            {actors.map((a) => (
              <option key={a.id} value={a.id}>{a.name ?? a.id}</option>
            ))}
          </select>
        </label>
        <label className="field">
          Action
          <select name="action" defaultValue={shown.action ?? ""}>
            <option value="">Any</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a} value={a}>{a}</option>
            ))}
          </select>
        </label>
        <label className="field">
          Target
          <select name="target_kind" defaultValue={shown.target_kind ?? ""}>
            <option value="">Any</option>
            {AUDIT_TARGET_KINDS.map((k) => (
              <option key={k} value={k}>{k.replace("_", " ")}</option>
            ))}
          </select>
        </label>
        <label className="field">
          From
          <input type="date" name="from" defaultValue={shown.from ?? ""} />
        </label>
        <label className="field">
          To (inclusive)
          <input type="date" name="to" defaultValue={shown.to ?? ""} />
        </label>
        <div className="field">
          <button type="submit" className="button">Filter</button>
        </div>
        <div className="field">
          <a className="button" href={`/api/v1/audit.csv${apiFilters ? `?${apiFilters}` : ""}`} download>Export CSV</a>
        </div>
      </form>
      {problem ? (
        <div className="error-box" role="alert">{problem}</div>
      ) : page.items.length === 0 ? (
        <p className="empty-state">No changes match these filters.</p>
      ) : (
        <table className="grid-table">
          <thead>
            <tr>
              <th>When (UTC)</th>
              <th>Who</th>
              <th>Address</th>
              <th>Action</th>
              <th>Target</th>
              <th>What changed</th>
            </tr>
          </thead>
          <tbody>
            {page.items.map((event) => {
              const fields = changedFields(event);
              return (
                <tr key={event.id}>
                  <td>{event.occurred_at.replace("T", " ").slice(0, 19)}</td>
                  <td>
                    {event.actor_name ?? event.actor_id ?? "—"}
                    {event.actor_kind !== "user" ? <span className="muted"> ({event.actor_kind.replace("_", " ")})</span> : null}
                  </td>
                  <td>{event.address ?? "—"}</td>
                  <td><code>{event.action}</code></td>
                  <td>
                    {event.target_name ?? "—"}
                    {event.target_id ? <div className="muted"><code>{event.target_id}</code></div> : null}
                  </td>
                  <td>
                    <details>
                      <summary>{fields.length > 0 ? fields.join(", ") : event.before ? (event.after ? "no field" : "deleted") : event.after ? "created" : "—"}</summary>
                      <pre style={{ whiteSpace: "pre-wrap", maxWidth: "36rem" }}>{JSON.stringify({ before: event.before, after: event.after }, null, 2)}</pre>
                    </details>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <p>
        {cursor ? <a href={`/admin/audit?${queryString(shown)}`}>Newest</a> : null}
        {cursor && page.next_cursor ? " · " : null}
        {page.next_cursor ? <a href={`/admin/audit?${queryString({ ...shown, cursor: page.next_cursor })}`}>Older changes →</a> : null}
      </p>
    </div>
  );
}
