import "server-only";
import { isDeepStrictEqual } from "node:util";
import type { Principal } from "@/lib/access/roles";
import { findOrganization } from "@/lib/auth/directory";
import { grantForPrincipal, isEditor } from "@/lib/dashboards/policy";
import type { ValidManifest } from "@/lib/dashboards/manifest";
import { recordAudit } from "@/lib/audit/record";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { Prisma, WidgetAlert, WidgetAlertEvaluation } from "@/lib/db/generated/client";
import { Invalid, conflict, forbidden, notFound, type ValidationItem } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { alertProblems } from "@/lib/manifest-check/alerts";
import { cronError, latestDue } from "@/lib/notifications/settings/cron";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import { emailGroups } from "@/lib/reports/email-groups";
import { filterProblems } from "@/lib/reports/schedules";
import { parseScopeKey, scopeKey, reportScope, withinLocations } from "@/lib/reports/schedules-scope";
import type { AlertEvaluationView, AlertStateName, AlertView, CreateAlertBody, UpdateAlertBody } from "./contract";
import { evaluateAlerts, type AlertDelivery } from "./evaluate";
import { declarationColumns, outsideRecipients, type Declaration } from "@/lib/dashboards/manifest-alerts";
import { alertRecord } from "./record";
import { conditionWords, figureFormat, watchedColumn } from "./words";
import { DEFAULT_CURRENCY } from "@/lib/dashboards/format";
import { orgView, viewColumnFormats, type ViewManifest } from "@/lib/dashboards/wiring";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { AlertDefinition } from "@/lib/manifest/alert";

/**
 * Widget alerts as principals see and change them (issue 45 §1), through tenant transactions only. Who may do what
 * (docs/alerts.md): editors (admins, general managers) alert anyone of the organization, email groups and channels on
 * dashboards they can view; other members alert only themselves, as Metabase and Grafana let a viewer subscribe to
 * what they see. A general manager scoped to locations sees and changes the alerts whose shared scope lies within
 * theirs; a member who is no editor, the alerts they own. Alerts declared in a dashboard manifest change by pushing
 * the manifest; only their switches (mute, snooze, the admin's approval) change here.
 */



const DECLARED_IN_MANIFEST = "This alert is declared in the dashboard's manifest: change it there and push the manifest (only muted, snoozed_until and shared_approved change here)";

/** The published dashboard an alert watches, as `principal` may see it (404 otherwise). */
async function watchedDashboard(principal: Principal, idOrSlug: string) {
  const granted = await grantForPrincipal(principal, idOrSlug, "published");
  if (granted.version === "draft") throw conflict("Publish the dashboard before alerting on it: alerts watch its published version");
  if (!granted.parsed.ok) throw conflict("The published version no longer passes Quarry's checks: publish a fixed version before alerting on it");
  return { dashboardId: granted.dashboardId, manifest: granted.parsed.value, version: granted.version };
}

/** Everything an alert's declaration must agree with, as 422 items under `body`. */
async function declarationProblems(tx: TenantTx, principal: Principal, manifest: ValidManifest, d: Declaration, timeZone: string, now: Date): Promise<ValidationItem[]> {
  const items: ValidationItem[] = alertProblems(manifest, d).map((p) => ({ loc: ["body", ...p.path], msg: p.message, type: "alert" }));
  items.push(...filterProblems(manifest, d.filters, timeZone, now));
  if (d.cadence.kind === "cron") {
    const error = cronError(d.cadence.cron, timeZone);
    if (error) items.push({ loc: ["body", "cadence", "cron"], msg: error, type: "cron" });
  }
  const r = d.recipients;
  if (!isEditor(principal) && (r.user_ids.some((id) => id !== principal.userId) || r.group_ids.length > 0 || r.channels.length > 0)) {
    throw forbidden("Only editors (admins and general managers) alert others, email groups or channels; you may alert yourself");
  }
  const users = new Set((await tx.user.findMany({ where: { id: { in: r.user_ids } }, select: { id: true } })).map((u) => u.id));
  r.user_ids.forEach((id, i) => {
    if (!users.has(id)) items.push({ loc: ["body", "recipients", "user_ids", i], msg: `'${id}' is not a member of this organization`, type: "unknown_user" });
  });
  const groups = new Set((await emailGroups(tx, r.group_ids)).map((g) => g.id));
  r.group_ids.forEach((id, i) => {
    if (!groups.has(id)) items.push({ loc: ["body", "recipients", "group_ids", i], msg: `'${id}' is not an email group of this organization`, type: "unknown_group" });
  });
  if (!r.me && r.user_ids.length + r.group_ids.length + r.channels.length === 0) items.push({ loc: ["body", "recipients"], msg: "An alert tells someone: add me, a member, an email group or a channel", type: "missing" });
  return items;
}

/** Whether `principal` may see an alert: its owner, a member it names, an editor within its shared scope. */
function visibleTo(principal: Principal, row: WidgetAlert): boolean {
  if (row.ownerId === principal.userId || AlertDefinition.parse(row.definition).recipients.user_ids.includes(principal.userId)) return true;
  return isEditor(principal) && withinLocations(row.sharedLocationIds, principal.locationIds);
}

/** Whether `principal` may change an alert: its owner, or an editor within its shared scope. */
const mayChange = (principal: Principal, row: WidgetAlert) => row.ownerId === principal.userId || (isEditor(principal) && withinLocations(row.sharedLocationIds, principal.locationIds));

/** Whether `principal` may see what an evaluation in `key` found: a member their own scope, an editor the scopes within their locations. */
function scopeVisible(principal: Principal, key: string): boolean {
  const scope = parseScopeKey(key);
  if (!scope) return false;
  if (!isEditor(principal)) return key === scopeKey(reportScope(principal.role, principal.locationIds));
  return withinLocations(scope.locationIds, principal.locationIds);
}

async function findOr404(tx: TenantTx, principal: Principal, id: string): Promise<WidgetAlert> {
  const row = await tx.widgetAlert.findUnique({ where: { id } });
  if (!row || !visibleTo(principal, row)) throw notFound("Alert");
  return row;
}

const num = (d: Prisma.Decimal | null) => (d === null ? null : Number(d));

export function evaluationView(e: WidgetAlertEvaluation): AlertEvaluationView {
  return {
    id: e.id,
    alert_id: e.alertId,
    evaluated_at: e.evaluatedAt.toISOString(),
    trigger: e.trigger as AlertEvaluationView["trigger"],
    scope_key: e.scopeKey,
    dimension_value: e.dimensionValue === "" ? null : e.dimensionValue,
    value: num(e.value),
    previous_value: num(e.previousValue),
    change: num(e.change),
    threshold: num(e.threshold),
    threshold_high: num(e.thresholdHigh),
    outcome: e.outcome as AlertEvaluationView["outcome"],
    met: e.met,
    state: e.state as AlertStateName,
    source: e.source as AlertEvaluationView["source"],
    rollup: e.rollup,
    error: e.error,
  };
}

/**
 * Each dashboard's published manifest as its organization reads it (orgView: money in the organization's currency),
 * for conditions in words; a manifest that does not parse on its own (one naming the organization's tables or shared
 * datasets) has none, and its alerts' figures read as grouped numbers.
 */
async function publishedViews(tx: TenantTx, dashboards: { id: string; publishedVersion: number | null }[]): Promise<Map<string, ViewManifest>> {
  const published = dashboards.filter((d) => d.publishedVersion !== null);
  if (published.length === 0) return new Map();
  const [org, versions] = await Promise.all([
    tx.organization.findFirst({ select: { currency: true } }),
    tx.dashboardVersion.findMany({ where: { OR: published.map((d) => ({ dashboardId: d.id, version: d.publishedVersion! })) }, select: { dashboardId: true, specYaml: true } }),
  ]);
  const views = new Map<string, ViewManifest>();
  for (const version of versions) {
    const parsed = parseDashboardYaml(version.specYaml);
    if (parsed.ok) views.set(version.dashboardId, orgView(parsed.dashboard, org?.currency ?? DEFAULT_CURRENCY));
  }
  return views;
}

/** The condition in words, its figures as the published widget shows the watched column. */
function conditionText(view: ViewManifest | undefined, widgetId: string, definition: AlertDefinition): string {
  const widget = view?.widgets.find((w) => w.metadata.id === widgetId);
  if (!view || !widget) return conditionWords(definition.condition);
  return conditionWords(definition.condition, figureFormat(widget, watchedColumn(widget, definition.column), viewColumnFormats(view, widget)));
}

async function views(tx: TenantTx, principal: Principal, rows: WidgetAlert[]): Promise<AlertView[]> {
  const [dashboards, states] = await Promise.all([
    tx.dashboard.findMany({ where: { id: { in: rows.map((r) => r.dashboardId) } }, select: { id: true, name: true, slug: true, publishedVersion: true } }),
    tx.widgetAlertState.findMany({ where: { alertId: { in: rows.map((r) => r.id) } }, orderBy: [{ scopeKey: "asc" }, { dimensionValue: "asc" }] }),
  ]);
  const dashboardOf = new Map(dashboards.map((d) => [d.id, d]));
  const viewOf = await publishedViews(tx, dashboards);
  return rows.map((row) => {
    const { definition, cadence } = alertRecord(row);
    return {
      id: row.id,
      dashboard_id: row.dashboardId,
      dashboard_slug: dashboardOf.get(row.dashboardId)?.slug ?? "",
      dashboard_name: dashboardOf.get(row.dashboardId)?.name ?? "",
      widget_name: viewOf.get(row.dashboardId)?.widgets.find((w) => w.metadata.id === row.widgetId)?.metadata.name ?? null,
      condition_text: conditionText(viewOf.get(row.dashboardId), row.widgetId, definition),
      name: row.name,
      widget_id: row.widgetId,
      ...definition,
      cadence,
      muted: row.muted,
      snoozed_until: row.snoozedUntil?.toISOString() ?? null,
      shared_approved: row.sharedApprovedBy !== null,
      manifest_id: row.manifestId,
      owner_id: row.ownerId,
      states: states
        .filter((s) => s.alertId === row.id && scopeVisible(principal, s.scopeKey))
        .map((s) => ({
          scope_key: s.scopeKey,
          dimension_value: s.dimensionValue === "" ? null : s.dimensionValue,
          state: s.state as AlertStateName,
          since: s.since.toISOString(),
          last_value: num(s.lastValue),
          last_evaluated_at: s.lastEvaluatedAt?.toISOString() ?? null,
          last_notified_at: s.lastNotifiedAt?.toISOString() ?? null,
        })),
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  });
}

function mayApprove(principal: Principal, wanted: boolean | undefined) {
  if (wanted && principal.role !== "admin") throw forbidden("Only an admin may approve the shared scope for email-group addresses, Slack and webhooks");
}

export async function createAlert(principal: Principal, body: CreateAlertBody, now: Date): Promise<AlertView> {
  mayApprove(principal, body.shared_approved);
  const org = await findOrganization(principal.orgId);
  const dashboard = await watchedDashboard(principal, body.dashboard_id);
  const { dashboard_id: _dashboard, muted, snoozed_until, shared_approved, ...declaration } = body;
  void _dashboard;
  return withTenant(principal, async (tx) => {
    const items = await declarationProblems(tx, principal, dashboard.manifest, declaration, org?.timeZone ?? "UTC", now);
    if (items.length > 0) throw new Invalid(items);
    const row = await tx.widgetAlert.create({
      data: {
        id: newId("wal"),
        orgId: principal.orgId,
        dashboardId: dashboard.dashboardId,
        ...declarationColumns(declaration),
        muted,
        snoozedUntil: snoozed_until ? new Date(snoozed_until) : null,
        ownerId: principal.userId,
        sharedRole: principal.role,
        sharedLocationIds: [...new Set(principal.locationIds ?? [])].sort(),
        sharedApprovedBy: shared_approved ? principal.userId : null,
        sharedApprovedVersion: shared_approved ? dashboard.version : null,
        createdAt: now,
        updatedAt: now,
      },
    });
    const [view] = await views(tx, principal, [row]);
    await recordAudit(tx, { actor: principal, action: "alert.create", target: { id: row.id, name: row.name }, after: view });
    return view;
  });
}


export async function updateAlert(principal: Principal, id: string, body: UpdateAlertBody, now: Date): Promise<AlertView> {
  mayApprove(principal, body.shared_approved);
  const org = await findOrganization(principal.orgId);
  const stored = await withTenant(principal, (tx) => findOr404(tx, principal, id));
  if (!mayChange(principal, stored)) throw forbidden("Only the alert's owner or an editor changes it");
  const { muted, snoozed_until, shared_approved, ...edits } = body;
  const declared = Object.fromEntries(Object.entries(edits).filter(([, v]) => v !== undefined));
  if (stored.manifestId !== null && Object.keys(declared).length > 0) throw conflict(DECLARED_IN_MANIFEST);
  const record = alertRecord(stored);
  const merged: Declaration = { name: stored.name, widget_id: stored.widgetId, cadence: record.cadence, ...record.definition, ...declared };
  const dashboard = Object.keys(declared).length > 0 ? await watchedDashboard(principal, stored.dashboardId) : null;
  return withTenant(principal, async (tx) => {
    const row = await findOr404(tx, principal, id);
    const data: Prisma.WidgetAlertUpdateInput = { updatedAt: now };
    if (dashboard) {
      const items = await declarationProblems(tx, principal, dashboard.manifest, merged, org?.timeZone ?? "UTC", now);
      if (items.length > 0) throw new Invalid(items);
      Object.assign(data, declarationColumns(merged));
      const changedOutside = !isDeepStrictEqual(outsideRecipients(AlertDefinition.parse(merged)), outsideRecipients(record.definition));
      if (changedOutside && principal.role !== "admin") Object.assign(data, { sharedApprovedBy: null, sharedApprovedVersion: null });
    }
    if (muted !== undefined) data.muted = muted;
    if (snoozed_until !== undefined) data.snoozedUntil = snoozed_until ? new Date(snoozed_until) : null;
    if (shared_approved !== undefined) {
      const published = await tx.dashboard.findUnique({ where: { id: row.dashboardId }, select: { publishedVersion: true } });
      Object.assign(data, shared_approved ? { sharedApprovedBy: principal.userId, sharedApprovedVersion: published?.publishedVersion ?? null } : { sharedApprovedBy: null, sharedApprovedVersion: null });
    }
    const [before] = await views(tx, principal, [row]);
    const updated = await tx.widgetAlert.update({ where: { id }, data });
    const [after] = await views(tx, principal, [updated]);
    await recordAudit(tx, { actor: principal, action: "alert.update", target: { id, name: updated.name }, before, after });
    return after;
  });
}

export async function deleteAlert(principal: Principal, id: string): Promise<void> {
  await withTenant(principal, async (tx) => {
    const row = await findOr404(tx, principal, id);
    if (!mayChange(principal, row)) throw forbidden("Only the alert's owner or an editor deletes it");
    if (row.manifestId !== null) throw conflict(DECLARED_IN_MANIFEST.replace("change it there", "remove it there"));
    const [before] = await views(tx, principal, [row]);
    await tx.widgetAlert.delete({ where: { id } });
    await recordAudit(tx, { actor: principal, action: "alert.delete", target: { id, name: row.name }, before });
  });
}

export async function listAlerts(principal: Principal, query: PageQuery & { dashboard_id?: string }): Promise<{ items: AlertView[]; total: number; limit: number; offset: number }> {
  return withTenant(principal, async (tx) => {
    const rows = await tx.widgetAlert.findMany({ where: query.dashboard_id ? { dashboardId: query.dashboard_id } : {}, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
    const visible = rows.filter((r) => visibleTo(principal, r));
    const page = visible.slice(query.offset, query.offset + query.limit);
    return pageBody(await views(tx, principal, page), visible.length, query);
  });
}

export async function getAlert(principal: Principal, id: string): Promise<AlertView> {
  return withTenant(principal, async (tx) => (await views(tx, principal, [await findOr404(tx, principal, id)]))[0]);
}

/** An alert's evaluations, newest first, in the scopes the caller may see (what its history chart draws). */
export async function alertHistory(principal: Principal, id: string, query: PageQuery) {
  return withTenant(principal, async (tx) => {
    await findOr404(tx, principal, id);
    const scopes = (await tx.widgetAlertEvaluation.findMany({ where: { alertId: id }, distinct: ["scopeKey"], select: { scopeKey: true } })).map((s) => s.scopeKey).filter((k) => scopeVisible(principal, k));
    const where = { alertId: id, scopeKey: { in: scopes } };
    const [total, rows] = await Promise.all([tx.widgetAlertEvaluation.count({ where }), tx.widgetAlertEvaluation.findMany({ where, orderBy: [{ evaluatedAt: "desc" }, { id: "desc" }], ...pageWindow(query) })]);
    return pageBody(rows.map(evaluationView), total, query);
  });
}

/**
 * "Test now": evaluates the alert in every recipient scope as a scheduled evaluation would, records the evaluations
 * (trigger `test`), moves no state and sends nothing; answers those in scopes the caller may see.
 */
export async function testAlert(principal: Principal, id: string, now: Date): Promise<AlertEvaluationView[]> {
  await withTenant(principal, (tx) => findOr404(tx, principal, id));
  const report = await evaluateAlerts(principal.orgId, [id], { trigger: "test", occurrence: null, now });
  const ids = report.evaluations.flatMap((e) => (e.recorded && scopeVisible(principal, e.scopeKey) ? [e.recorded.evaluationId] : []));
  const rows = await withTenant(principal, (tx) => tx.widgetAlertEvaluation.findMany({ where: { id: { in: ids } }, orderBy: [{ scopeKey: "asc" }, { dimensionValue: "asc" }] }));
  return rows.map(evaluationView);
}

/** The occurrence a data change is evaluated as: the change's own id, so a retried hand-off evaluates it once. */
export async function evaluateOnDataChange(orgId: string, changeId: string, now: Date, deliver?: AlertDelivery) {
  const ids = await withTenant({ orgId }, (tx) => tx.widgetAlert.findMany({ where: { cadenceKind: "on_data_change" }, select: { id: true } }));
  return evaluateAlerts(
    orgId,
    ids.map((r) => r.id),
    { trigger: "data_change", occurrence: `data:${changeId}`, now, deliver },
  );
}

/**
 * The cron alerts of an organization due at `now`, evaluated: each alert's latest occurrence since the last one
 * evaluated (missed ones are not caught up: an alert tells how things are, not how they were), alerts due at the same
 * instant together so they share queries. The occurrence is marked evaluated only after its evaluation, so a worker
 * killed midway evaluates it again, and what was recorded already is not recorded (nor sent) twice.
 */
export async function evaluateDueAlerts(orgId: string, now: Date, deliver?: AlertDelivery) {
  const org = await findOrganization(orgId);
  const timeZone = org?.timeZone ?? "UTC";
  const rows = await withTenant({ orgId }, (tx) => tx.widgetAlert.findMany({ where: { cadenceKind: "cron" }, select: { id: true, cron: true, lastScheduledFor: true, createdAt: true } }));
  const byInstant = new Map<number, string[]>();
  for (const row of rows) {
    const due = latestDue(row.cron ?? "", now, row.lastScheduledFor ?? row.createdAt, timeZone);
    if (due) byInstant.set(due.getTime(), [...(byInstant.get(due.getTime()) ?? []), row.id]);
  }
  const reports = [];
  for (const [instant, ids] of [...byInstant].sort(([a], [b]) => a - b)) {
    const due = new Date(instant);
    reports.push(await evaluateAlerts(orgId, ids, { trigger: "cron", occurrence: `cron:${due.toISOString()}`, now, deliver }));
    await withTenant({ orgId }, (tx) => tx.widgetAlert.updateMany({ where: { id: { in: ids }, OR: [{ lastScheduledFor: null }, { lastScheduledFor: { lt: due } }] }, data: { lastScheduledFor: due } }));
  }
  return reports;
}
