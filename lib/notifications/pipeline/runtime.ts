import "server-only";
import type { Principal } from "@/lib/access/roles";
import type { TenantTx } from "@/lib/db/tenant";
import { Prisma, type NotificationDelivery } from "@/lib/db/generated/client";
import { type JobQueue, getQueue } from "@/lib/job-queue";
import { type Clock, systemClock } from "@/lib/notifications/clock";
import type { ReportAttachment, ReportMessage } from "@/lib/notifications/transports/send";
import { newId } from "@/lib/ids";

/** What a scheduled report's run asks of the renderer (lib/reports/render.ts renderDashboardReport). */
export type ReportRenderer = (
  principal: Principal,
  input: { dashboardId: string; filters: Record<string, unknown>; format: "pdf" | "png"; paper?: "a4" | "letter"; orientation?: "portrait" | "landscape"; tab?: string; width?: number },
) => Promise<{ bytes: Uint8Array; contentType: string; filename: string; pages: number }>;

/**
 * What the pipeline asks of the scheduled reports that ride it (lib/reports/pipeline-hooks.ts). Reports sit above
 * the pipeline and use it, so the pipeline never imports them: the worker that runs both (lib/worker.ts) hands
 * these in. Without them the tick schedules no report and a report delivery fails its job.
 */
export interface ReportHooks {
  /**
   * In the tick's tenant transaction at `now`: records a run for each schedule's latest due occurrence and prunes
   * expired files; returns the new runs and the runs created within `strandedWindow` still "queued" (a crash between
   * commit and enqueue), each to be queued on `reports.run`.
   */
  schedule(tx: TenantTx, orgId: string, now: Date, strandedWindow: { gt: Date; lt: Date }): Promise<{ due: string[]; stranded: string[] }>;
  /** One report run (a `reports.run` job): rendered once per recipient scope, its deliveries queued. */
  run(rt: Runtime, job: ReportRunJob): Promise<void>;
  /** A report delivery's files, signed links and unsubscribe links; a SendError (transient or not) when they cannot be had. */
  message(rt: Runtime, delivery: NotificationDelivery, sentAt: Date): Promise<Pick<ReportMessage, "scheduleId" | "files" | "unsubscribe">>;
}

/** A widget alerts' evaluation (queue `alerts.evaluate`): the organization's due cron alerts, or its data-change alerts after one change. */
export type AlertEvaluateJob = { orgId: string; trigger: "cron" } | { orgId: string; trigger: "data_change"; change: string };

/** A widget alert delivery's picture: the widget drawn in the delivery's scope (lib/alerts/delivery.ts). */
export interface AlertPicture {
  alertId: string;
  picture: ReportAttachment;
}

/**
 * What the pipeline asks of widget alerts (lib/alerts/pipeline-hooks.ts), handed in by the worker as the reports'
 * hooks are: alerts sit above the pipeline and fan out through it, so the pipeline never imports them.
 */
export interface AlertHooks {
  /** In the tick's tenant transaction: the evaluations due now (cron alerts; data-change alerts after a warehouse change). */
  schedule(tx: TenantTx, orgId: string, now: Date): Promise<AlertEvaluateJob[]>;
  /** One evaluation job: the alerts evaluated, the messages they owe fanned out. */
  evaluate(rt: Runtime, job: AlertEvaluateJob): Promise<void>;
  /** An alert delivery's picture; a SendError (transient or not) when it cannot be drawn. */
  message(rt: Runtime, delivery: NotificationDelivery): Promise<AlertPicture>;
}

/** The pipeline's outside world: a clock, a queue and (for reports and alerts) their hooks and renderer, all injectable. */
export interface Runtime {
  clock: Clock;
  queue: JobQueue;
  /** Given by the worker (lib/worker.ts); routes that only queue jobs run without them. */
  reports?: ReportHooks;
  /** Given by the worker (lib/worker.ts), as `reports`. */
  alerts?: AlertHooks;
  /** The dashboard renderer of report runs; the export endpoint's when absent (tests wrap it to count renders). */
  render?: ReportRenderer;
}

/** The runtime routes use: the wall clock and the process-wide queue. */
export async function defaultRuntime(): Promise<Runtime> {
  return { clock: systemClock, queue: await getQueue() };
}

export interface EvaluateJob {
  orgId: string;
  runId: string;
}
/** A scheduled report's run (queue `reports.run`). */
export interface ReportRunJob {
  orgId: string;
  runId: string;
}
export interface DeliverJob {
  orgId: string;
  deliveryId: string;
  /** The attempt this job is for (1-based); a job for an attempt already made is stale and ignored. */
  attempt: number;
}

/**
 * A table of runs, one row per owner (a rule, a report schedule) and occurrence: its name, its owner column and
 * the prefix of its ids. Declared in code by the domain that owns the table, never from input.
 */
export interface RunTable {
  table: string;
  ownerColumn: string;
  idPrefix: string;
}

/** A rule's runs. */
export const RULE_RUNS: RunTable = { table: "notification_rule_runs", ownerColumn: "rule_id", idPrefix: "nrn" };

const IDENTIFIER = /^[a-z_]+$/;

/**
 * Records the run of one owner for one occurrence; null when that occurrence already has its run (the table's
 * unique (owner, occurrence) key makes concurrent ticks and a manual trigger at the same instant record it once).
 */
export async function insertRun(tx: TenantTx, runs: RunTable, orgId: string, ownerId: string, scheduledFor: Date, trigger: "cron" | "manual"): Promise<string | null> {
  if (!IDENTIFIER.test(runs.table) || !IDENTIFIER.test(runs.ownerColumn)) throw new Error(`Not a run table: ${runs.table}(${runs.ownerColumn})`);
  const rows = await tx.$queryRaw<{ id: string }[]>(Prisma.sql`
    INSERT INTO ${Prisma.raw(runs.table)} (id, org_id, ${Prisma.raw(runs.ownerColumn)}, scheduled_for, trigger, created_at)
    VALUES (${newId(runs.idPrefix)}, ${orgId}, ${ownerId}, ${scheduledFor}, ${trigger}, ${scheduledFor})
    ON CONFLICT (${Prisma.raw(runs.ownerColumn)}, scheduled_for) DO NOTHING RETURNING id`);
  return rows[0]?.id ?? null;
}
