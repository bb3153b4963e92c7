import { AsyncLocalStorage } from "node:async_hooks";
import { processSingleton } from "@/lib/process-singleton";

/**
 * Background work (alert evaluations, issue 45 §5) yields to interactive work: a viewer's dashboard, a `sql`
 * widget, anything someone waits for. Interactive work is every tenant transaction (tenant.ts) and every user SQL
 * slot (lib/query/execute.ts) that does not run as background work; both report here. Two rules:
 *
 * - A background statement enters the slots only once no interactive statement waits for one (waiting at most one
 *   interactive statement's time limit, so it cannot starve): interactive work never queues behind background work
 *   that came after it. The slots stay work-conserving: a slot nobody waits for is background's.
 * - A background worker paces its pieces (a transaction of bookkeeping, a dashboard query): before each, it waits
 *   until interactive work has been quiet for `quietMs`, the gap between one viewer's requests, so a viewer's
 *   next request does not find the engine busy. Under constant interactive work it still keeps `leastShare` of the
 *   time: it waits at most (1 − share) / share × its last piece, so alerts are late under load, never lost.
 *
 * The embedded engine serves the primary's transactions and the analytics copies on the same two cores and one
 * primary connection, so pacing is what keeps a round of alerts out of the viewers' way there (docs/alerts.md).
 * In memory on purpose, as the slots are: each process paces its own worker beside its own requests.
 */

interface Activity {
  /** Interactive pieces in flight: tenant transactions, and user SQL waiting for a slot or running. */
  active: number;
  /** User SQL among them still waiting for a slot. */
  waiting: number;
  /** performance.now() when the last of them ended. */
  lastEndedAt: number;
  /** Background pieces waiting for their moment, woken at each change. */
  readonly listeners: Set<() => void>;
}

const activity = processSingleton("interactiveUserSql", (): Activity => ({ active: 0, waiting: 0, lastEndedAt: -Infinity, listeners: new Set() }));
// One store per process: Next.js bundles this module more than once, and the flag must cross from the worker's copy to tenant.ts's.
const backgroundFlag = processSingleton("backgroundWork", () => new AsyncLocalStorage<true>());

/** The longest an interactive statement may run (lib/query/execute.ts's default limit): a background statement waits no longer for viewers' waiting to end. */
const STATEMENT_YIELD_AT_MOST_MS = 10_000;

/** What interactive work is in flight, and how many background pieces wait for their moment (diagnostics, tests). */
export function databaseActivity(): { interactive: number; waiting: number; yielding: number } {
  const a = activity.get();
  return { interactive: a.active, waiting: a.waiting, yielding: a.listeners.size };
}

function changed(a: Activity): void {
  for (const wake of [...a.listeners]) wake();
}

/** Runs `work`, counted as interactive work unless it runs as background work (a pacer's `run`). */
export async function asInteractive<T>(work: () => Promise<T>): Promise<T> {
  if (backgroundFlag.get().getStore()) return work();
  const a = activity.get();
  a.active++;
  try {
    return await work();
  } finally {
    a.active--;
    a.lastEndedAt = performance.now();
    changed(a);
  }
}

/**
 * Runs `work` through `enter` (a slot of the user SQL queue) by the caller's priority: interactive work at once,
 * counted while it waits and runs; background work once no interactive work waits for a slot (work-conserving: a
 * slot nobody else wants is background's, even beside running interactive work).
 */
export async function byPriority<T>(enter: (work: () => Promise<T>) => Promise<T>, work: () => Promise<T>): Promise<T> {
  const a = activity.get();
  if (backgroundFlag.get().getStore()) {
    await waitUntil(() => (a.waiting === 0 ? 0 : Infinity), STATEMENT_YIELD_AT_MOST_MS);
    return enter(work);
  }
  return asInteractive(async () => {
    a.waiting++;
    let started = false;
    try {
      return await enter(() => {
        started = true;
        a.waiting--;
        changed(a);
        return work();
      });
    } finally {
      if (!started) a.waiting--;
    }
  });
}

/**
 * Resolves once `readyIn()` answers 0, or after `atMostMs`. `readyIn` answers how long until it is ready if nothing
 * changes (Infinity: not before interactive work changes); it is asked again at each change and when that time is up.
 */
async function waitUntil(readyIn: () => number, atMostMs: number): Promise<void> {
  const a = activity.get();
  const giveUpAt = performance.now() + atMostMs;
  for (;;) {
    const now = performance.now();
    const wait = readyIn();
    if (wait <= 0 || now >= giveUpAt) return;
    const wakeIn = Math.min(giveUpAt - now, wait);
    await new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        a.listeners.delete(wake);
        resolve();
      };
      const timer = Number.isFinite(wakeIn) ? setTimeout(wake, wakeIn) : undefined;
      a.listeners.add(wake);
    });
  }
}

/** How long until interactive work will have been quiet for `quietMs` (Infinity while some is in flight). */
function quietIn(quietMs: number): number {
  const a = activity.get();
  return a.active > 0 ? Infinity : quietMs - (performance.now() - a.lastEndedAt);
}

export interface PaceOptions {
  /** How long interactive work must have been quiet before a piece starts: about the gap between one viewer's requests. */
  quietMs?: number;
  /** The least share of time kept under constant interactive work (0 < share ≤ 1); 0 yields as long as interactive work goes on. */
  leastShare?: number;
}

export interface BackgroundPacer {
  /** Runs `work` as background work: its user SQL enters the slots after interactive work (byPriority). */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** Called before each piece of the work: waits for a quiet moment, at most as leastShare allows. */
  pace(): Promise<void>;
}

/**
 * Measured with bench widget-alerts (docs/alerts.md): 250 ms covers the gap between a viewer's sequential requests
 * on a loaded machine, and a quarter of the time keeps 1,000 alerts within an hourly cadence under constant viewers.
 */
export const DEFAULT_PACE: Required<PaceOptions> = { quietMs: 250, leastShare: 0.25 };

export function backgroundPacer(options: PaceOptions = {}): BackgroundPacer {
  const { quietMs, leastShare } = { ...DEFAULT_PACE, ...options };
  if (!(leastShare >= 0 && leastShare <= 1)) throw new RangeError("leastShare is a share of time, from 0 to 1");
  let pieceStartedAt = performance.now();
  return {
    run: (work) => backgroundFlag.get().run(true, work),
    async pace() {
      const lastPieceMs = performance.now() - pieceStartedAt;
      const atMostMs = leastShare === 0 ? Infinity : Math.max(quietMs, (lastPieceMs * (1 - leastShare)) / leastShare);
      await waitUntil(() => quietIn(quietMs), atMostMs);
      pieceStartedAt = performance.now();
    },
  };
}
