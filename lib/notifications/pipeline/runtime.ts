import "server-only";
import type { TenantTx } from "@/lib/db/tenant";
import type { Clock } from "@/lib/notifications/clock";
import type { JobQueue } from "@/lib/notifications/pipeline/queue";
import { newId } from "@/lib/ids";

/** The pipeline's outside world: a clock and a queue, both injectable. */
export interface Runtime {
  clock: Clock;
  queue: JobQueue;
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
