import "server-only";
import type { Principal } from "@/lib/access/roles";
import type { TenantTx } from "@/lib/db/tenant";
import type { Clock } from "@/lib/notifications/clock";
import type { JobQueue } from "@/lib/notifications/pipeline/queue";
import { newId } from "@/lib/ids";

/** What a scheduled report's run asks of the renderer (lib/reports/render.ts renderDashboardReport). */
export type ReportRenderer = (
  principal: Principal,
  input: { dashboardId: string; filters: Record<string, unknown>; format: "pdf" | "png"; paper?: "a4" | "letter"; orientation?: "portrait" | "landscape"; tab?: string; width?: number },
) => Promise<{ bytes: Uint8Array; contentType: string; filename: string; pages: number }>;

/** The pipeline's outside world: a clock, a queue and (for reports) a renderer, all injectable. */
export interface Runtime {
  clock: Clock;
  queue: JobQueue;
  /** The dashboard renderer of report runs; the export endpoint's when absent (tests wrap it to count renders). */
  render?: ReportRenderer;
}

export interface EvaluateJob {
  orgId: string;
  runId: string;
}
export interface DeliverJob {
  orgId: string;
  deliveryId: string;
  /** The attempt this job is for (1-based); a job for an attempt already made is stale and ignored. */
  attempt: number;
}

/** Records a run of a rule for one occurrence; null when that occurrence already has its run (the unique (rule, occurrence) key). */
export async function insertRun(tx: TenantTx, orgId: string, ruleId: string, scheduledFor: Date, trigger: "cron" | "manual"): Promise<string | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO notification_rule_runs (id, org_id, rule_id, scheduled_for, trigger, created_at)
    VALUES (${newId("nrn")}, ${orgId}, ${ruleId}, ${scheduledFor}, ${trigger}, ${scheduledFor})
    ON CONFLICT (rule_id, scheduled_for) DO NOTHING RETURNING id`;
  return rows[0]?.id ?? null;
}
