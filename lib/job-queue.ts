import "server-only";
import type pg from "pg";
import PgBoss from "pg-boss";
import { getDb } from "@/lib/db/client";
import { config } from "@/lib/config";
import { notificationsConfig } from "@/lib/config/notifications";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-singleton";

/** Queue names (pg-boss). */
export const QUEUES = {
  tick: "notifications.tick",
  evaluate: "notifications.evaluate",
  deliver: "notifications.deliver",
  /** A scheduled report's run: renders once per recipient scope, then queues its deliveries (lib/reports/schedules-run.ts). */
  report: "reports.run",
} as const;

/**
 * How long a delivery job may run before pg-boss considers its worker dead and
 * hands the job out again; a claimed delivery's lease lasts as long. The
 * default of NOTIFICATIONS_CONFIG.delivery_lease_seconds.
 */
export const DELIVER_EXPIRE_SECONDS = 120;

/** The configured lease (seconds): delivery jobs expire, and claimed deliveries lapse, after it. */
export function deliveryLeaseSeconds(): number {
  return notificationsConfig().delivery_lease_seconds;
}

const QUEUE_OPTIONS: Record<keyof typeof QUEUES, Omit<PgBoss.Queue, "name">> = {
  // Scheduled every minute; a missed tick is simply superseded by the next one.
  tick: { policy: "singleton", retryLimit: 0, expireInSeconds: 300 },
  // pg-boss retries these only when a worker crashed or threw; send failures are rescheduled by the handler with its own backoff.
  evaluate: { retryLimit: 3, retryDelay: 30, retryBackoff: true, expireInSeconds: 300 },
  deliver: { retryLimit: 5, retryDelay: 0, expireInSeconds: DELIVER_EXPIRE_SECONDS },  // replaced by the configured lease in openQueue
  // Rendering can take a while (a render has its own time limit); a run that threw is retried, and files already rendered are kept.
  report: { retryLimit: 3, retryDelay: 30, retryBackoff: true, expireInSeconds: 600 },
};

/** What the pipeline needs from the queue; pg-boss in production, the same pg-boss in tests. */
export interface JobQueue {
  send(name: string, data: object, options?: { startAfter?: Date }): Promise<string | null>;
}

let backgroundChoice = false;
const queueSingleton = processSingleton("queue", () => openQueue(backgroundChoice));

/**
 * The process-wide pg-boss, on the application database: over the PGlite
 * connection in the embedded default (through pg-boss's `db` adapter), or its
 * own pool against DATABASE_URL. Queues are created on first start.
 * `background` (maintenance: expiring jobs of dead workers; cron schedules)
 * runs where the worker runs: the web process when `in_process_worker`, else
 * `npm run worker`. Only the first caller's choice counts.
 */
export function getQueue(background = notificationsConfig().in_process_worker): Promise<PgBoss> {
  backgroundChoice = background;
  return queueSingleton.get();
}

export async function closeQueue(): Promise<void> {
  const pending = queueSingleton.peek();
  queueSingleton.set(undefined);
  if (pending) await (await pending).stop({ graceful: false, wait: true, close: true });
}

/** Maintenance hands out again the jobs of dead workers: at least twice per lease, at most every two minutes (pg-boss's default). */
function maintenanceSeconds(): number {
  return Math.max(1, Math.min(120, Math.floor(deliveryLeaseSeconds() / 2)));
}

async function openQueue(background: boolean): Promise<PgBoss> {
  const cfg = config();
  let boss: PgBoss;
  if (cfg.database.kind === "postgres") {
    boss = new PgBoss({ connectionString: cfg.database.url, schema: "pgboss", supervise: background, schedule: background, maintenanceIntervalSeconds: maintenanceSeconds() });
  } else {
    const { engine } = await getDb();
    if (!engine) throw new Error("Embedded database without its engine");
    // The engine serves one connection (lib/db/embedded-engine.ts): pg-boss shares its pool.
    // Multi-statement scripts (migrations, locked maintenance) come without values and answer one result per statement.
    const db: PgBoss.Db = {
      executeSql: async (text, values) => {
        const result = (await engine.pool.query(text, values)) as unknown as pg.QueryResult | pg.QueryResult[];
        return Array.isArray(result) ? (result[result.length - 1] ?? { rows: [] }) : result;
      },
    };
    boss = new PgBoss({ db, schema: "pgboss", supervise: background, schedule: background, maintenanceIntervalSeconds: maintenanceSeconds() });
  }
  boss.on("error", (error) => log.error("job queue error", { error: error.message }));
  await boss.start();
  for (const [key, name] of Object.entries(QUEUES) as [keyof typeof QUEUES, string][]) {
    const options = key === "deliver" ? { ...QUEUE_OPTIONS[key], expireInSeconds: deliveryLeaseSeconds() } : QUEUE_OPTIONS[key];
    if (!(await boss.getQueue(name))) await boss.createQueue(name, { name, ...options });
  }
  return boss;
}
