import "server-only";
import { findOrganization, type OrgIdentity } from "@/lib/auth/directory";
import { Role } from "@/lib/access/roles";
import { formatInstant } from "@/lib/dashboards/format";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { NotificationDelivery, ReportRun, ReportSchedule } from "@/lib/db/generated/client";
import { Forbidden, NotFound } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { usableKinds } from "@/lib/notifications/settings/channels";
import { CHANNEL_UNUSABLE, channelRecipient, fanOut, leftGroupsReason } from "@/lib/notifications/pipeline/fan-out";
import type { ReportRenderer, ReportRunJob, Runtime } from "@/lib/notifications/pipeline/runtime";
import { loadOptOuts } from "@/lib/notifications/settings/opt-outs";
import type { ReportAttachment } from "@/lib/notifications/transports/send";
import { reportAllowedDomains } from "@/lib/organizations/settings";
import { emailGroups } from "./email-groups";
import { domainOf, sharedApproval } from "./schedules";
import { DOWNLOAD_LINK_SECONDS, downloadLink } from "./schedules-links";
import { parseScopeKey, reportScope, scopeKey, scopePrincipal, withinLocations, type ReportScope } from "./schedules-scope";

/** How long a rendered file is kept (and its download links can work at most). */
const FILE_RETENTION_MS = 7 * 24 * 3600_000;

type Channel = "email" | "slack" | "webhook";

interface Target {
  channel: Channel;
  recipient: string;
  scope: ReportScope;
  /** Who the render is for in logs: the user, or the schedule's creator for the shared scope. */
  renderFor: string;
  skipReason?: string;
}

/** A scope as a message's reader says it: the role and the locations by name (`names`: id -> name; an unknown id as it is). */
export const describeScope = (scope: ReportScope, names: ReadonlyMap<string, string>) =>
  `${scope.role.replace("_", " ")}, ${scope.locationIds.length > 0 ? `locations ${scope.locationIds.map((id) => names.get(id) ?? id).join(", ")}` : "every location"}`;

/** The organization's location names by id, for describeScope. */
export async function locationNames(tx: TenantTx): Promise<Map<string, string>> {
  return new Map((await tx.location.findMany({ select: { id: true, name: true } })).map((l) => [l.id, l.name]));
}

/**
 * Who receives a run and in which scope: each user recipient in their own role and locations (read now, so a
 * changed scope applies from the next run); addresses, Slack and the webhook in the shared scope, only while an
 * admin's approval stands for the dashboard version published now and still within its creator's scope, and addresses only in the allowed domains. Email
 * groups are read now too: a member who is a user is that user, any other member an address; one address is mailed
 * once, however many ways it is named (a user first, then an address of its own).
 */
async function reportTargets(tx: TenantTx, schedule: ReportSchedule): Promise<Target[]> {
  const groups = await emailGroups(tx, schedule.groupIds);
  const dashboard = await tx.dashboard.findUnique({ where: { id: schedule.dashboardId }, select: { publishedVersion: true } });
  const members = [...new Set(groups.flatMap((g) => g.members))].sort();
  const [usable, optOuts, unsubscribed, users, domains, creator] = await Promise.all([
    usableKinds(tx),
    loadOptOuts(tx),
    tx.reportUnsubscribe.findMany({ where: { scheduleId: schedule.id }, select: { recipient: true } }),
    tx.user.findMany({
      where: { OR: [{ id: { in: schedule.userIds } }, ...(members.length > 0 ? [{ email: { in: members, mode: "insensitive" as const } }] : [])] },
      select: { id: true, email: true, role: true, locationIds: true },
      orderBy: { id: "asc" },
    }),
    reportAllowedDomains(tx),
    tx.user.findUnique({ where: { id: schedule.createdBy }, select: { locationIds: true } }),
  ]);
  const gone = new Set(unsubscribed.map((u) => u.recipient));
  const shared = reportScope(Role.parse(schedule.sharedRole), schedule.sharedLocationIds);
  const approval = sharedApproval(schedule, dashboard?.publishedVersion ?? null);
  const sharedSkip = approval.reason
    ? approval.reason
    : creator && !withinLocations(shared.locationIds, creator.locationIds.length > 0 ? creator.locationIds : null)
      ? "the shared scope is wider than its creator's current locations"
      : undefined;
  const optedOut = (address: string, userId?: string) =>
    gone.has(address) || (userId !== undefined && gone.has(userId)) ? "recipient unsubscribed from this report" : (optOuts.fromRule(schedule.id, { userId, address }) ?? undefined);
  const targets: Target[] = [];
  for (const channel of schedule.channels as Channel[]) {
    if (!usable.has(channel)) {
      targets.push({ channel, recipient: "-", scope: shared, renderFor: schedule.createdBy, skipReason: CHANNEL_UNUSABLE });
      continue;
    }
    if (channel === "email") {
      const named = new Set<string>();
      const mail = (target: Omit<Target, "channel">) => {
        if (named.has(target.recipient)) return;
        named.add(target.recipient);
        targets.push({ channel, ...target });
      };
      const asUser = (u: (typeof users)[number], skipReason?: string) => {
        const address = u.email.toLowerCase();
        mail({ recipient: address, scope: reportScope(Role.parse(u.role), u.locationIds), renderFor: u.id, skipReason: optedOut(address, u.id) ?? skipReason });
      };
      const asAddress = (address: string, skipReason?: string) =>
        mail({
          recipient: address,
          scope: shared,
          renderFor: schedule.createdBy,
          skipReason: !domains.includes(domainOf(address)) ? `${domainOf(address)} is no longer one of the organization's report domains` : (sharedSkip ?? optedOut(address) ?? skipReason),
        });
      const direct = new Set(schedule.userIds);
      for (const u of users) if (direct.has(u.id)) asUser(u);
      for (const address of schedule.addresses) asAddress(address);
      const userOf = new Map(users.map((u) => [u.email.toLowerCase(), u]));
      for (const address of members) {
        // A member who left every group that names them (a group opt-out) hears nothing through them.
        const via = groups.filter((g) => g.members.includes(address));
        const left = via.filter((g) => optOuts.leftGroup(g.id, address));
        const leftAll = left.length === via.length ? leftGroupsReason(left.map((g) => g.groupName)) : undefined;
        const user = userOf.get(address);
        if (user) asUser(user, leftAll);
        else asAddress(address, leftAll);
      }
      const found = new Set(groups.map((g) => g.id));
      for (const id of schedule.groupIds.filter((g) => !found.has(g))) {
        targets.push({ channel, recipient: `group ${id}`, scope: shared, renderFor: schedule.createdBy, skipReason: "this email group was removed" });
      }
    }
    if (channel === "slack" || channel === "webhook") {
      targets.push({ channel, recipient: await channelRecipient(tx, schedule.orgId, channel), scope: shared, renderFor: schedule.createdBy, skipReason: sharedSkip });
    }
  }
  return targets;
}

type Options = { paper?: "a4" | "letter"; orientation?: "portrait" | "landscape"; tab?: string | null; width?: number | null };

/**
 * The renderer used when the runtime names none: the export endpoint's. Loaded on first use, so the routes
 * that import the pipeline (to queue a job) do not load fonts, ECharts and pdfkit.
 */
async function defaultRenderer(): Promise<ReportRenderer> {
  return (await import("./render")).renderDashboardReport;
}

/**
 * The file of one run, scope and format: the stored one, or rendered now (as the scope's principal, through the
 * same policy, cache and row-level security as the viewer) and stored. Answers whether it rendered.
 */
async function ensureFile(rt: Runtime, org: OrgIdentity, run: ReportRun, schedule: ReportSchedule, key: string, format: "pdf" | "png", renderFor: string): Promise<boolean> {
  const scope = { orgId: org.id };
  const existing = await withTenant(scope, (tx) => tx.reportFile.findUnique({ where: { runId_scopeKey_format: { runId: run.id, scopeKey: key, format } }, select: { id: true } }));
  if (existing) return false;
  const parsed = parseScopeKey(key);
  if (!parsed) throw new Error(`Unreadable report scope '${key}'`);
  const options = schedule.options as Options;
  const render = rt.render ?? (await defaultRenderer());
  const file = await render(scopePrincipal(org, renderFor, parsed), {
    dashboardId: schedule.dashboardId,
    filters: schedule.filters as Record<string, unknown>,
    format,
    paper: options.paper,
    orientation: options.orientation,
    tab: options.tab ?? undefined,
    width: options.width ?? undefined,
  });
  const now = rt.clock.now();
  await withTenant(scope, (tx) =>
    tx.reportFile.createMany({
      data: [{ id: newId("rfl"), orgId: org.id, runId: run.id, scopeKey: key, format, contentType: file.contentType, filename: file.filename, bytes: Buffer.from(file.bytes), pages: file.pages, createdAt: now, expiresAt: new Date(now.getTime() + FILE_RETENTION_MS) }],
      skipDuplicates: true,
    }),
  );
  return true;
}

/** Whether a render failed because the scope may not see the dashboard (its role is not in platform.roles): no retry mends that. */
const deniedAccess = (error: unknown) => error instanceof NotFound || error instanceof Forbidden;

/**
 * One report run (a pg-boss job): renders once per distinct scope and format among the recipients who will
 * receive it, then records one delivery per channel and recipient (skipped ones with their reason) and queues
 * them on the notification pipeline, which retries, dead-letters and reports them in delivery health. A scope
 * whose render failed for another reason still gets its deliveries: each tries the render again, with the
 * pipeline's backoff, until it dead-letters.
 */
export async function runReport(rt: Runtime, job: ReportRunJob): Promise<void> {
  const scope = { orgId: job.orgId };
  const loaded = await withTenant(scope, async (tx) => {
    const run = await tx.reportRun.findUnique({ where: { id: job.runId } });
    if (!run || run.status !== "queued") return null;
    const schedule = await tx.reportSchedule.findUnique({ where: { id: run.scheduleId } });
    if (!schedule) return null;
    const dashboard = await tx.dashboard.findUnique({ where: { id: schedule.dashboardId }, select: { name: true } });
    return { run, schedule, dashboard, targets: await reportTargets(tx, schedule) };
  });
  const org = await findOrganization(job.orgId);
  if (!loaded || !org) return;
  const { run, schedule, dashboard, targets } = loaded;

  const scopes = new Map<string, string>();
  for (const t of targets) if (!t.skipReason && !scopes.has(scopeKey(t.scope))) scopes.set(scopeKey(t.scope), t.renderFor);
  const denied = new Set<string>();
  let renders = 0;
  for (const [key, renderFor] of scopes) {
    for (const format of schedule.formats as ("pdf" | "png")[]) {
      try {
        if (await ensureFile(rt, org, run, schedule, key, format, renderFor)) renders += 1;
      } catch (error) {
        if (deniedAccess(error)) {
          denied.add(key);
          break;
        }
        log.warn("report render failed; its deliveries will retry it", { orgId: job.orgId, runId: run.id, scope: key, error: (error as Error).message });
      }
    }
  }

  const now = rt.clock.now();
  await fanOut(rt, job.orgId, now, async (tx) => {
    // Claiming the run makes a second run of the same job (a redelivered one) fan out nothing.
    const claimed = await tx.reportRun.updateMany({ where: { id: run.id, status: "queued" }, data: { status: "sent", renders, finishedAt: now } });
    if (claimed.count === 0) return null;
    const names = await locationNames(tx);
    return {
      origin: { reportRunId: run.id, scheduleId: schedule.id },
      subject: `${schedule.name}: ${dashboard?.name ?? "dashboard"}`,
      severity: "info",
      dedupeKey: `report:${run.id}`,
      targets: targets.map((t) => {
        const key = scopeKey(t.scope);
        return {
          channel: t.channel,
          recipient: t.recipient,
          skipReason: t.skipReason ?? (denied.has(key) ? `the recipient's role (${t.scope.role}) may not view this dashboard` : undefined),
          reportScope: key,
          body: `${dashboard?.name ?? "The dashboard"} as of ${formatInstant(run.scheduledFor, schedule.timeZone)}, in the scope of ${describeScope(t.scope, names)}.`,
        };
      }),
    };
  });
}

export class ReportUnavailable extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = "ReportUnavailable";
  }
}

/** What a report delivery sends: its files and signed links (valid DOWNLOAD_LINK_SECONDS, never past the file). */
export async function reportAttachments(rt: Runtime, d: NotificationDelivery): Promise<{ files: ReportAttachment[]; scheduleId: string }> {
  if (!d.reportRunId || !d.scheduleId || !d.reportScope) throw new ReportUnavailable("Not a report delivery", true);
  const scope = { orgId: d.orgId };
  const loaded = await withTenant(scope, async (tx) => {
    const run = await tx.reportRun.findUnique({ where: { id: d.reportRunId! } });
    const schedule = run ? await tx.reportSchedule.findUnique({ where: { id: run.scheduleId } }) : null;
    return run && schedule ? { run, schedule } : null;
  });
  const org = await findOrganization(d.orgId);
  if (!loaded || !org) throw new ReportUnavailable("The report schedule was deleted", true);
  const { run, schedule } = loaded;
  for (const format of schedule.formats as ("pdf" | "png")[]) {
    try {
      await ensureFile(rt, org, run, schedule, d.reportScope, format, schedule.createdBy);
    } catch (error) {
      if (deniedAccess(error)) throw new ReportUnavailable(`The recipient's scope may not view this dashboard: ${(error as Error).message}`, true);
      throw new ReportUnavailable(`Render failed: ${(error as Error).message}`, false);
    }
  }
  // Checked after the files exist: published versions only grow, so a version that is still the approved one now
  // was the one rendered. An outside recipient (Slack, a webhook, an address that is no user) gets nothing else.
  const outsideRefusal = await withTenant(scope, async (tx) => {
    const outside = d.channel !== "email" || !(await tx.user.findFirst({ where: { email: { equals: d.recipient, mode: "insensitive" } }, select: { id: true } }));
    if (!outside) return undefined;
    const dashboard = await tx.dashboard.findUnique({ where: { id: schedule.dashboardId }, select: { publishedVersion: true } });
    return sharedApproval(schedule, dashboard?.publishedVersion ?? null).reason;
  });
  if (outsideRefusal) throw new ReportUnavailable(outsideRefusal, true);
  const rows = await withTenant(scope, (tx) => tx.reportFile.findMany({ where: { runId: run.id, scopeKey: d.reportScope! }, orderBy: { format: "asc" } }));
  const now = rt.clock.now();
  const files = await Promise.all(
    rows.map(async (f) => {
      const expiresAt = new Date(Math.min(f.expiresAt.getTime(), now.getTime() + DOWNLOAD_LINK_SECONDS * 1000));
      return {
        format: f.format as "pdf" | "png",
        filename: f.filename,
        contentType: f.contentType,
        bytes: Buffer.from(f.bytes),
        pages: f.pages,
        url: await downloadLink({ orgId: f.orgId, id: f.id, scopeKey: f.scopeKey }, expiresAt),
        expiresAt,
      };
    }),
  );
  return { files, scheduleId: schedule.id };
}

/** Rendered files past their retention, removed by the scheduler's tick (their links have expired by then). */
export async function pruneReportFiles(tx: TenantTx, now: Date): Promise<number> {
  return (await tx.reportFile.deleteMany({ where: { expiresAt: { lt: now } } })).count;
}
