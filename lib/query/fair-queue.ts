/**
 * Slots for user SQL in one process, shared fairly between organizations without leaving any idle.
 * At most `total` pieces of work run at once (the reader pool's size) and at most `perKey` of one
 * organization (by default every slot). An organization alone may use every idle slot, so eight
 * analysts of one organization run side by side; while others wait, each slot that frees goes to
 * the waiting organization with the fewest running (round robin among equals; the one that was
 * served last goes last), so a newcomer takes the next slot to free before any more of the busy
 * organization's queued work, and busy organizations converge on equal shares. A slot is never
 * taken back from running work: a runaway statement holds its slot until its statement time limit,
 * so an organization holding every slot yields them all within that bound.
 *
 * Slots beyond an organization's first are lent for work that ends in time, as far as the queue
 * can know it: with `longMs` (a queue's default; each piece may bring its own, such as its time
 * limit), by how its organization's last piece ran. One whose last piece ended under its `longMs`
 * (within the last TRUSTED_FOR_MS) may use every slot. One whose work ran its `longMs` or longer is
 * held to one slot for as long again (renewed by each long piece), and so is one the queue knows
 * nothing of lately: a burst of runaways runs one at a time, leaving the other slots (and the
 * machine's cores) to other organizations, while dashboards' statements take every idle slot from
 * the moment the first of them ends.
 *
 * A caller that has not started by `deadlineMs` gets QueueDeadline, which the service layer turns
 * into 503 with Retry-After.
 *
 * In memory on purpose: it bounds this process's connections, which no other process shares; each
 * replica has its own pool and its own queue.
 */
/** How long an organization whose last piece of work ended short may use every slot: a working session's gaps between dashboards. */
const TRUSTED_FOR_MS = 10 * 60_000;

const DEADLINE_BRAND = Symbol.for("quarry.QueueDeadline");

export class QueueDeadline extends Error {
  readonly [DEADLINE_BRAND] = true;

  constructor(readonly waitedMs: number) {
    super(`waited ${waitedMs} ms for a slot`);
    this.name = "QueueDeadline";
  }

  /**
   * Next.js bundles this module more than once (route handlers, instrumentation, the worker) while the queues are
   * process singletons: a queue made by one copy throws that copy's class, which another copy's `instanceof` would
   * not recognise (an export answered 500 instead of 503 that way). Every copy's error carries the same brand.
   */
  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as { [DEADLINE_BRAND]?: unknown })[DEADLINE_BRAND] === true;
  }
}

/** What is running and waiting, overall and per key. */
export interface QueueState {
  running: number;
  lines: Record<string, { running: number; waiting: number }>;
}

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
}

interface Line {
  running: number;
  waiting: Waiter[];
  /** When this organization last got a slot (a grant count): among organizations with as many running, the one served longest ago goes first. */
  lastServed: number;
}

export class FairQueue {
  /** Organizations running or waiting, in the order they came (a Map keeps it): who came first goes first among equals never served. */
  private readonly lines = new Map<string, Line>();
  private running = 0;
  private grants = 0;

  /** How each organization's last piece of work ran (longMs only): long until `until` (held to one slot), or short (trusted with every slot) until then. */
  private readonly standing = new Map<string, { long: boolean; until: number }>();

  /** Callers of `until` still waiting, each checked after every change. */
  private readonly watchers = new Set<() => void>();

  constructor(readonly limits: { total: number; perKey: number; deadlineMs: number; longMs?: number }) {}

  /**
   * Runs `work` once a slot of `key` is free; throws QueueDeadline when none was free in time. `longMs`:
   * how long this piece may run before it counts as long (its own time limit, say), when the queue judges work.
   */
  async run<T>(key: string, work: () => Promise<T>, longMs = this.limits.longMs): Promise<T> {
    await this.acquire(key);
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.release(key, performance.now() - started, longMs);
    }
  }

  /** What is running and waiting, per key (tests, diagnostics). */
  snapshot(): QueueState {
    return { running: this.running, lines: Object.fromEntries([...this.lines].map(([key, line]) => [key, { running: line.running, waiting: line.waiting.length }])) };
  }

  /** Resolves once `test` holds of the snapshot, checked now and after each change: a test waits for the queue's own event (a slot taken, a caller queued), not a guessed sleep. */
  until(test: (state: QueueState) => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!test(this.snapshot())) return;
        this.watchers.delete(check);
        resolve();
      };
      this.watchers.add(check);
      check();
    });
  }

  private changed(): void {
    for (const check of [...this.watchers]) check();
  }

  private line(key: string): Line {
    let line = this.lines.get(key);
    if (!line) {
      line = { running: 0, waiting: [], lastServed: 0 };
      this.lines.set(key, line);
    }
    return line;
  }

  private acquire(key: string): Promise<void> {
    const line = this.line(key);
    // dispatch() leaves no slot free while someone under their limit waits, so a free slot is this caller's to take.
    if (line.waiting.length === 0 && line.running < this.limitOf(key) && this.running < this.limits.total) {
      this.grant(line);
      return Promise.resolve();
    }
    const queuedAt = Date.now();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          line.waiting.splice(line.waiting.indexOf(waiter), 1);
          this.forget(key);
          this.changed();
          reject(new QueueDeadline(Date.now() - queuedAt));
        }, this.limits.deadlineMs),
      };
      line.waiting.push(waiter);
      this.changed();
    });
  }

  private release(key: string, ranMs: number, longMs: number | undefined): void {
    const line = this.line(key);
    line.running--;
    this.running--;
    if (this.limits.longMs !== undefined && longMs !== undefined) this.note(key, ranMs, longMs);
    this.dispatch();
    this.forget(key);
    this.changed();
  }

  /** How many slots `key` may hold now (see the top of this file). */
  private limitOf(key: string): number {
    const { perKey, longMs } = this.limits;
    if (longMs === undefined) return perKey;
    const standing = this.standing.get(key);
    return standing && !standing.long && performance.now() < standing.until ? perKey : 1;
  }

  private note(key: string, ranMs: number, longMs: number): void {
    const now = performance.now();
    // Forget standings that have passed, so the map holds only organizations served lately.
    for (const [other, { until }] of this.standing) if (until <= now) this.standing.delete(other);
    const held = this.standing.get(key);
    if (ranMs >= longMs) this.standing.set(key, { long: true, until: Math.max(held?.long ? held.until : 0, now + ranMs) });
    // A short piece ends no hold: the runaways still running would otherwise take the idle slots again.
    else if (!held?.long) this.standing.set(key, { long: false, until: now + TRUSTED_FOR_MS });
  }

  /** Starts waiters while slots are free, each in the line nextLine() picks. */
  private dispatch(): void {
    while (this.running < this.limits.total) {
      const line = this.nextLine();
      if (!line) return;
      const waiter = line.waiting.shift()!;
      this.grant(line);
      waiter.start();
    }
  }

  /**
   * The waiting organization under its own limit with the fewest running; among equals, the one
   * served longest ago (round robin: whoever just had a slot goes behind the others).
   */
  private nextLine(): Line | undefined {
    let best: Line | undefined;
    for (const [key, line] of this.lines) {
      if (line.waiting.length === 0 || line.running >= this.limitOf(key)) continue;
      if (!best || line.running < best.running || (line.running === best.running && line.lastServed < best.lastServed)) best = line;
    }
    return best;
  }

  private grant(line: Line): void {
    line.running++;
    this.running++;
    line.lastServed = ++this.grants;
    this.changed();
  }

  private forget(key: string): void {
    const line = this.lines.get(key);
    if (line && line.running === 0 && line.waiting.length === 0) this.lines.delete(key);
  }
}
