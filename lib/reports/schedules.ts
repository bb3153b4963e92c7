import "server-only";
import { isDeepStrictEqual } from "node:util";
import { findOrganization } from "@/lib/auth/directory";
import type { Principal } from "@/lib/access/roles";
import { grantForPrincipal } from "@/lib/dashboards/policy";
import type { ValidManifest } from "@/lib/dashboards/manifest";
import { recordAudit } from "@/lib/audit/record";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { ReportRun, ReportSchedule } from "@/lib/db/generated/client";
import { Invalid, conflict, forbidden, notFound, type ValidationItem } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { cronError, nextRuns } from "@/lib/notifications/settings/cron";
import { QUEUES } from "@/lib/job-queue";
import { insertRun, type ReportRunJob, type RunTable, type Runtime } from "@/lib/notifications/pipeline/runtime";
import { reportAllowedDomains } from "@/lib/organizations/settings";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import { filterValueProblems } from "@/lib/manifest-check/alerts";
import { emailGroups } from "./email-groups";
import type { CreateReportScheduleBody, ReportScheduleView, UpdateReportScheduleBody } from "./schedules-contract";
import { withinLocations } from "./schedules-scope";

type Settings = Omit<CreateReportScheduleBody, "time_zone" | "shared_approved"> & { time_zone: string };

/** An IANA zone Intl accepts. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export const domainOf = (address: string) => address.slice(address.lastIndexOf("@") + 1).toLowerCase();

/**
 * Filter values as the viewer's query reads them: each key must name a filter widget, and each value must
 * mean something to every widget it drives (the engine's own `toPredicate`, so a value the viewer would
 * answer with a widget error is refused here, before it reaches anyone's inbox).
 */
export function filterProblems(manifest: ValidManifest, filters: Record<string, unknown>, timeZone: string, now: Date): ValidationItem[] {
  const filterIds = new Set(manifest.widgets.filter((w) => w.spec.component === "filter").map((w) => w.metadata.id));
  const items: ValidationItem[] = [];
  for (const id of Object.keys(filters)) {
    if (!filterIds.has(id)) items.push({ loc: ["body", "filters", id], msg: `'${id}' is not a filter widget of this dashboard`, type: "unknown_filter" });
  }
  for (const problem of filterValueProblems(manifest.widgets, filters, { timeZone, now })) {
    items.push({ loc: ["body", "filters", problem.filterId], msg: problem.reason, type: "bad_filter_value" });
  }
  return items;
}

/**
 * The published dashboard a schedule is for, as `principal` may see it (404 otherwise). Asked outside any
 * tenant transaction: the policy opens its own.
 */
async function scheduledDashboard(principal: Principal, idOrSlug: string) {
  const granted = await grantForPrincipal(principal, idOrSlug, "published");
  if (granted.version === "draft") throw conflict("Publish the dashboard before scheduling reports of it");
  if (!granted.parsed.ok) throw conflict("The published version no longer passes Quarry's checks: publish a fixed version before scheduling it");
  return { dashboardId: granted.dashboardId, manifest: granted.parsed.value, version: granted.version };
}

/**
 * Checks a schedule as a whole (new, or an edit merged onto the stored one) for `principal`. Addresses of
 * users become those users (who then get their own scope).
 */
async function checkSettings(principal: Principal, tx: TenantTx, s: Settings, now: Date, dashboard: Awaited<ReturnType<typeof scheduledDashboard>>) {
  const { manifest } = dashboard;
  const items: ValidationItem[] = [];
  if (!isTimeZone(s.time_zone)) items.push({ loc: ["body", "time_zone"], msg: `'${s.time_zone}' is not an IANA time zone`, type: "time_zone" });
  const cron = cronError(s.cron, isTimeZone(s.time_zone) ? s.time_zone : "UTC");
  if (cron) items.push({ loc: ["body", "cron"], msg: cron, type: "cron" });
  items.push(...filterProblems(manifest, s.filters, isTimeZone(s.time_zone) ? s.time_zone : "UTC", now));
  if (s.tab !== null && !manifest.manifest.spec.tabs.some((t) => t.id === s.tab)) {
    items.push({ loc: ["body", "tab"], msg: `'${s.tab}' is not a tab of this dashboard`, type: "unknown_tab" });
  }

  const users = await tx.user.findMany({ where: { OR: [{ id: { in: s.user_ids } }, { email: { in: s.addresses } }] }, select: { id: true, email: true } });
  const known = new Set(users.map((u) => u.id));
  s.user_ids.forEach((id, i) => {
    if (!known.has(id)) items.push({ loc: ["body", "user_ids", i], msg: `'${id}' is not a user of this organization`, type: "unknown_user" });
  });
  const byEmail = new Map(users.map((u) => [u.email.toLowerCase(), u.id]));
  const userIds = [...new Set([...s.user_ids, ...s.addresses.flatMap((a) => (byEmail.has(a) ? [byEmail.get(a)!] : []))])];
  const addresses = [...new Set(s.addresses.filter((a) => !byEmail.has(a)))];
  const domains = await reportAllowedDomains(tx);
  s.addresses.forEach((a, i) => {
    if (!byEmail.has(a) && !domains.includes(domainOf(a))) {
      items.push({
        loc: ["body", "addresses", i],
        msg: `${domainOf(a)} is not one of the organization's report domains (${domains.join(", ") || "none"}); an admin adds domains in the organization settings`,
        type: "domain_not_allowed",
      });
    }
  });
  const groups = new Set((await emailGroups(tx, s.group_ids)).map((g) => g.id));
  s.group_ids.forEach((id, i) => {
    // Another organization's group is invisible here (row-level security): unknown, like a missing one.
    if (!groups.has(id)) items.push({ loc: ["body", "group_ids", i], msg: `'${id}' is not an email group of this organization`, type: "unknown_group" });
  });
  if (s.group_ids.length > 0 && !s.channels.includes("email")) {
    items.push({ loc: ["body", "channels"], msg: "Email groups receive the report by e-mail: add the email channel", type: "missing" });
  }
  if (s.channels.includes("email") && userIds.length + addresses.length + s.group_ids.length === 0) {
    items.push({ loc: ["body", "user_ids"], msg: "E-mail needs at least one user, address or email group", type: "missing" });
  }

  const sharedLocations = s.shared_location_ids ?? principal.locationIds ?? [];
  if (!withinLocations(sharedLocations, principal.locationIds)) {
    throw forbidden("The shared scope must lie within your own locations: you cannot schedule a report of data you cannot see");
  }
  if (sharedLocations.length > 0) {
    const found = await tx.location.findMany({ where: { id: { in: sharedLocations } }, select: { id: true } });
    const have = new Set(found.map((l) => l.id));
    sharedLocations.forEach((id, i) => {
      if (!have.has(id)) items.push({ loc: ["body", "shared_location_ids", i], msg: `'${id}' is not a location of this organization`, type: "unknown_location" });
    });
  }
  if (items.length > 0) throw new Invalid(items);
  return { dashboardId: dashboard.dashboardId, userIds, addresses, sharedLocations: [...new Set(sharedLocations)].sort() };
}

/** Schedules the caller may see: all for an unscoped editor, else those whose shared scope lies within their locations. */
async function visibleIds(tx: TenantTx, principal: Principal, dashboardId?: string): Promise<string[] | null> {
  if (principal.locationIds === null || principal.locationIds.length === 0) return null;
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM report_schedules
     WHERE cardinality(shared_location_ids) > 0 AND shared_location_ids <@ ${principal.locationIds}::text[]
       AND (${dashboardId ?? null}::text IS NULL OR dashboard_id = ${dashboardId ?? null})`;
  return rows.map((r) => r.id);
}

async function findOr404(tx: TenantTx, principal: Principal, id: string): Promise<ReportSchedule> {
  const row = await tx.reportSchedule.findUnique({ where: { id } });
  if (!row || !withinLocations(row.sharedLocationIds, principal.locationIds)) throw notFound("Report schedule");
  return row;
}

async function views(tx: TenantTx, rows: ReportSchedule[], now: Date): Promise<ReportScheduleView[]> {
  const ids = rows.map((r) => r.id);
  const [dashboards, owners, runs] = await Promise.all([
    tx.dashboard.findMany({ where: { id: { in: rows.map((r) => r.dashboardId) } }, select: { id: true, name: true, slug: true, publishedVersion: true } }),
    tx.user.findMany({ where: { id: { in: rows.map((r) => r.createdBy) } }, select: { id: true, name: true, status: true } }),
    tx.$queryRaw<ReportRun[]>`
      SELECT DISTINCT ON (schedule_id) id, org_id AS "orgId", schedule_id AS "scheduleId", scheduled_for AS "scheduledFor", trigger, status, renders, error,
             created_at AS "createdAt", finished_at AS "finishedAt"
        FROM report_runs WHERE schedule_id = ANY(${ids}::text[]) ORDER BY schedule_id, scheduled_for DESC, id`,
  ]);
  const dashboardOf = new Map(dashboards.map((d) => [d.id, d]));
  const lastRunOf = new Map(runs.map((r) => [r.scheduleId, r]));
  const ownerOf = new Map(owners.map((u) => [u.id, u]));
  return rows.map((r) => ({ ...view(r, dashboardOf.get(r.dashboardId), lastRunOf.get(r.id) ?? null, now), owner: ownerView(r.createdBy, ownerOf.get(r.createdBy)) }));
}

/** A schedule's maker as its list shows them: a deactivated one stays named, so an editor sees whose scope it renders in. */
function ownerView(id: string, user: { name: string; status: string } | undefined): ReportScheduleView["owner"] {
  if (!user) return { id, name: null, status: "deleted" };
  return { id, name: user.name, status: user.status === "active" ? "active" : "deactivated" };
}

export function runView(run: ReportRun) {
  return {
    id: run.id,
    scheduled_for: run.scheduledFor.toISOString(),
    trigger: run.trigger === "manual" ? ("manual" as const) : ("cron" as const),
    status: run.status === "sent" ? ("sent" as const) : run.status === "error" ? ("error" as const) : ("queued" as const),
    renders: run.renders,
    error: run.error,
    finished_at: run.finishedAt?.toISOString() ?? null,
  };
}

/**
 * Whether addresses, Slack and webhooks may receive a schedule's shared scope: an admin approved it, for the
 * dashboard version published now. A newer published version waits for a new approval, and they receive nothing
 * meanwhile (the run records why).
 */
export function sharedApproval(r: Pick<ReportSchedule, "sharedApprovedBy" | "sharedApprovedVersion">, publishedVersion: number | null): { status: "approved" | "waiting_for_approval" | "waiting_for_reapproval"; reason?: string } {
  if (r.sharedApprovedBy === null) return { status: "waiting_for_approval", reason: "the shared scope of addresses, Slack and webhooks waits for an admin's approval" };
  if (r.sharedApprovedVersion !== null && r.sharedApprovedVersion === publishedVersion) return { status: "approved" };
  return {
    status: "waiting_for_reapproval",
    reason: `the dashboard was published again (version ${publishedVersion ?? "none"}) after an admin approved version ${r.sharedApprovedVersion ?? "unknown"} for addresses, Slack and webhooks: they receive nothing until an admin approves again`,
  };
}

/**
 * What addresses, Slack and webhooks receive from a schedule, as compared for its approval: the dashboard, formats,
 * paper, orientation, tab, width, filters, channels, addresses, email groups and shared locations. Its name, timing,
 * pause and user recipients (who receive their own scope) are not part of it.
 */
const sharedContent = (c: { dashboardId: string; formats: string[]; filters: unknown; options: unknown; channels: string[]; addresses: string[]; groupIds: string[]; sharedLocationIds: string[] }) => ({
  dashboardId: c.dashboardId,
  formats: [...c.formats].sort(),
  filters: c.filters,
  options: c.options,
  channels: [...c.channels].sort(),
  addresses: [...c.addresses].sort(),
  groupIds: [...c.groupIds].sort(),
  sharedLocationIds: [...c.sharedLocationIds].sort(),
});

function view(r: ReportSchedule, dashboard: { name: string; slug: string; publishedVersion: number | null } | undefined, lastRun: ReportRun | null, now: Date): Omit<ReportScheduleView, "owner"> {
  const options = r.options as { paper?: "a4" | "letter"; orientation?: "portrait" | "landscape"; tab?: string | null; width?: number | null };
  const approval = sharedApproval(r, dashboard?.publishedVersion ?? null);
  return {
    id: r.id,
    dashboard_id: r.dashboardId,
    dashboard_name: dashboard?.name ?? "",
    dashboard_slug: dashboard?.slug ?? "",
    name: r.name,
    cron: r.cron,
    time_zone: r.timeZone,
    formats: r.formats as ("pdf" | "png")[],
    filters: r.filters as Record<string, unknown>,
    paper: options.paper ?? "a4",
    orientation: options.orientation ?? "portrait",
    tab: options.tab ?? null,
    width: options.width ?? null,
    channels: r.channels as ("email" | "slack" | "webhook")[],
    user_ids: r.userIds,
    addresses: r.addresses,
    group_ids: r.groupIds,
    shared_role: r.sharedRole as ReportScheduleView["shared_role"],
    shared_location_ids: r.sharedLocationIds,
    shared_approved: approval.status === "approved",
    shared_approved_by: r.sharedApprovedBy,
    shared_approved_version: r.sharedApprovedVersion,
    shared_status: approval.status,
    paused: r.paused,
    next_run_at: r.paused ? null : (nextRuns(r.cron, now, 1, r.timeZone)[0]?.toISOString() ?? null),
    last_run: lastRun ? runView(lastRun) : null,
    created_by: r.createdBy,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

function settingsOf(r: ReportSchedule): Settings {
  const v = view(r, undefined, null, new Date(0));
  return {
    dashboard_id: r.dashboardId,
    name: v.name,
    cron: v.cron,
    time_zone: v.time_zone,
    formats: v.formats,
    filters: v.filters,
    paper: v.paper,
    orientation: v.orientation,
    tab: v.tab,
    width: v.width,
    channels: v.channels,
    user_ids: v.user_ids,
    addresses: v.addresses,
    group_ids: v.group_ids,
    shared_location_ids: v.shared_location_ids,
    paused: v.paused,
  };
}

const columns = (s: Settings, checked: Awaited<ReturnType<typeof checkSettings>>) => ({
  dashboardId: checked.dashboardId,
  name: s.name,
  cron: s.cron.trim(),
  timeZone: s.time_zone,
  formats: s.formats,
  filters: s.filters as object,
  options: { paper: s.paper, orientation: s.orientation, tab: s.tab, width: s.width },
  channels: s.channels,
  userIds: checked.userIds,
  addresses: checked.addresses,
  groupIds: s.group_ids,
  sharedLocationIds: checked.sharedLocations,
  paused: s.paused,
});

function mayApprove(principal: Principal, wanted: boolean | undefined) {
  if (wanted && principal.role !== "admin") throw forbidden("Only an admin may approve the shared scope for addresses, Slack and webhooks");
}

export async function createReportSchedule(principal: Principal, body: CreateReportScheduleBody, now: Date) {
  mayApprove(principal, body.shared_approved);
  const org = await findOrganization(principal.orgId);
  const dashboard = await scheduledDashboard(principal, body.dashboard_id);
  return withTenant(principal, async (tx) => {
    const settings: Settings = { ...body, time_zone: body.time_zone ?? org?.timeZone ?? "UTC" };
    const checked = await checkSettings(principal, tx, settings, now, dashboard);
    const row = await tx.reportSchedule.create({
      data: {
        id: newId("rsc"),
        orgId: principal.orgId,
        ...columns(settings, checked),
        sharedRole: principal.role,
        sharedApprovedBy: body.shared_approved ? principal.userId : null,
        sharedApprovedAt: body.shared_approved ? now : null,
        sharedApprovedVersion: body.shared_approved ? dashboard.version : null,
        createdBy: principal.userId,
        updatedBy: principal.userId,
        createdAt: now,
        updatedAt: now,
      },
    });
    const [created] = await views(tx, [row], now);
    await recordAudit(tx, { actor: principal, action: "report_schedule.create", target: { id: row.id, name: row.name }, after: created });
    return created;
  });
}

export async function listReportSchedules(principal: Principal, query: PageQuery & { dashboard_id?: string }, now: Date) {
  return withTenant(principal, async (tx) => {
    const visible = await visibleIds(tx, principal, query.dashboard_id);
    const where = { ...(query.dashboard_id ? { dashboardId: query.dashboard_id } : {}), ...(visible ? { id: { in: visible } } : {}) };
    const [total, rows] = await Promise.all([
      tx.reportSchedule.count({ where }),
      tx.reportSchedule.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "desc" }], ...pageWindow(query) }),
    ]);
    return pageBody(await views(tx, rows, now), total, query);
  });
}

export async function getReportSchedule(principal: Principal, id: string, now: Date) {
  return withTenant(principal, async (tx) => (await views(tx, [await findOr404(tx, principal, id)], now))[0]);
}

/**
 * An edit: merged onto the stored schedule and checked as a whole. The admin's approval of the shared scope
 * holds for what was approved (sharedContent) at the version then published: an editor who changes who receives
 * it, or what they receive, resets it.
 */
export async function updateReportSchedule(principal: Principal, id: string, body: UpdateReportScheduleBody, now: Date) {
  mayApprove(principal, body.shared_approved);
  const stored = await withTenant(principal, (tx) => findOr404(tx, principal, id));
  const given = Object.fromEntries(Object.entries(body).filter(([k, v]) => v !== undefined && k !== "shared_approved")) as Partial<Settings>;
  const settings: Settings = { ...settingsOf(stored), ...given };
  const dashboard = await scheduledDashboard(principal, settings.dashboard_id);
  return withTenant(principal, async (tx) => {
    const row = await findOr404(tx, principal, id);
    const checked = await checkSettings(principal, tx, settings, now, dashboard);
    const data = columns(settings, checked);
    const sharedChanged = !isDeepStrictEqual(sharedContent(data), sharedContent(row));
    type Approval = Pick<ReportSchedule, "sharedApprovedBy" | "sharedApprovedAt" | "sharedApprovedVersion">;
    const approvedNow: Approval = { sharedApprovedBy: principal.userId, sharedApprovedAt: now, sharedApprovedVersion: dashboard.version };
    const none: Approval = { sharedApprovedBy: null, sharedApprovedAt: null, sharedApprovedVersion: null };
    let approval: Approval = { sharedApprovedBy: row.sharedApprovedBy, sharedApprovedAt: row.sharedApprovedAt, sharedApprovedVersion: row.sharedApprovedVersion };
    if (body.shared_approved === true) approval = approvedNow;
    else if (body.shared_approved === false) approval = none;
    // An admin's own change of an approved schedule is their approval of what they saved, for the version published now.
    else if (sharedChanged) approval = principal.role === "admin" && row.sharedApprovedBy !== null ? approvedNow : none;
    const updated = await tx.reportSchedule.update({
      where: { id: row.id },
      // The shared scope takes the role of whoever last set it: never more than that editor may see.
      data: { ...data, ...approval, sharedRole: sharedChanged ? principal.role : row.sharedRole, updatedBy: principal.userId, updatedAt: now },
    });
    const [before, after] = await views(tx, [row, updated], now);
    await recordAudit(tx, { actor: principal, action: "report_schedule.update", target: { id: row.id, name: updated.name }, before, after });
    return after;
  });
}

export async function deleteReportSchedule(principal: Principal, id: string) {
  await withTenant(principal, async (tx) => {
    const row = await findOr404(tx, principal, id);
    const [before] = await views(tx, [row], new Date());
    await tx.reportSchedule.delete({ where: { id: row.id } });
    await recordAudit(tx, { actor: principal, action: "report_schedule.delete", target: { id: row.id, name: row.name }, before });
  });
}

/** A schedule's runs, recorded by the pipeline's one run insertion. */
export const REPORT_RUNS: RunTable = { table: "report_runs", ownerColumn: "schedule_id", idPrefix: "rrn" };

/** "Send now": one run at this instant, paused or not. */
export async function sendReportNow(principal: Principal, id: string, rt: Runtime) {
  const now = rt.clock.now();
  const run = await withTenant(principal, async (tx) => {
    const row = await findOr404(tx, principal, id);
    const runId = await insertRun(tx, REPORT_RUNS, principal.orgId, row.id, now, "manual");
    if (!runId) throw conflict("This report was already sent at this instant");
    return tx.reportRun.findUniqueOrThrow({ where: { id: runId } });
  });
  await rt.queue.send(QUEUES.report, { orgId: principal.orgId, runId: run.id } satisfies ReportRunJob);
  return runView(run);
}
