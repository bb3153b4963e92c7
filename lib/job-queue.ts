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
  /** Widget alerts' evaluations: an organization's due cron alerts, or its data-change alerts after a change (lib/alerts/pipeline-hooks.ts). */
  alerts: "alerts.evaluate",
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

/**
 * A queue as its domain declares it, once: the name jobs are sent to and worked from, and pg-boss's options for it
 * (policy, retries, the lease of a job). Created on first use by `queueWith`, or when the queue opens for the
 * notification pipeline's own.
 */
export interface QueueDefinition extends PgBoss.Queue {
  name: string;
}

/** The notification pipeline's queues (and the report runs that ride it); the deliver lease is the configured one. */
function pipelineQueues(): QueueDefinition[] {
  return [
    // Scheduled every minute; a missed tick is simply superseded by the next one.
    { name: QUEUES.tick, policy: "singleton", retryLimit: 0, expireInSeconds: 300 },
    // pg-boss retries these only when a worker crashed or threw; send failures are rescheduled by the handler with its own backoff.
    { name: QUEUES.evaluate, retryLimit: 3, retryDelay: 30, retryBackoff: true, expireInSeconds: 300 },
    { name: QUEUES.deliver, retryLimit: 5, retryDelay: 0, expireInSeconds: deliveryLeaseSeconds() },
    // Rendering can take a while (a render has its own time limit); a run that threw is retried, and files already rendered are kept.
    { name: QUEUES.report, retryLimit: 3, retryDelay: 30, retryBackoff: true, expireInSeconds: 600 },
    // An evaluation killed midway is retried: what it recorded is not recorded (nor sent) twice (lib/alerts/state.ts).
    { name: QUEUES.alerts, retryLimit: 3, retryDelay: 30, retryBackoff: true, expireInSeconds: 600 },
  ];
}

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
  for (const queue of pipelineQueues()) await ensureQueue(boss, queue);
  return boss;
}

/**
 * Per pg-boss instance, the queues this process has made sure of (a failed attempt is forgotten, so the next call
 * tries again), and the last creation, which the next one waits for.
 */
const ensured = new WeakMap<PgBoss, { known: Map<string, Promise<void>>; last: Promise<unknown> }>();

/** PostgreSQL's deadlock_detected: two creations attaching their partitions to pg-boss's job table at the same moment. */
const deadlocked = (error: unknown) => (error as { code?: string }).code === "40P01";

/**
 * Creates a queue unless it exists, once per process, one creation at a time: each attaches a partition to pg-boss's
 * job table, and two at once deadlock on PostgreSQL (measured: the documents' two queues created together). Another
 * process may create a queue at the same moment: a create that fails while the queue now exists found it made, and
 * one that deadlocked with the other process's is tried again. An existing queue keeps the options it was created with.
 */
function ensureQueue(boss: PgBoss, queue: QueueDefinition): Promise<void> {
  let state = ensured.get(boss);
  if (!state) ensured.set(boss, (state = { known: new Map(), last: Promise.resolve() }));
  const { known } = state;
  let ready = known.get(queue.name);
  if (!ready) {
    const create = async (attemptsLeft: number): Promise<void> => {
      if (await boss.getQueue(queue.name)) return;
      try {
        await boss.createQueue(queue.name, queue);
      } catch (error) {
        if (await boss.getQueue(queue.name)) return;
        if (deadlocked(error) && attemptsLeft > 1) return create(attemptsLeft - 1);
        throw error;
      }
    };
    ready = state.last.catch(() => undefined).then(() => create(3));
    state.last = ready;
    known.set(queue.name, ready);
    ready.catch(() => known.delete(queue.name));
  }
  return ready;
}

/**
 * The process-wide pg-boss (`getQueue`: its first caller decides where maintenance runs) with `queues` created:
 * how every domain (document indexing, rollups) reaches its own queues.
 */
export async function queueWith(...queues: QueueDefinition[]): Promise<PgBoss> {
  const boss = await getQueue();
  await Promise.all(queues.map((queue) => ensureQueue(boss, queue)));
  return boss;
}
