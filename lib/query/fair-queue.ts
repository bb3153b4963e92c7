/**
 * Slots for user SQL in one process, shared fairly between organizations. At most `total` pieces
 * of work run at once (the reader pool's size) and at most `perKey` of one organization; a caller
 * waits in its organization's line, and a freed slot goes to the organization that has waited
 * longest among those under their own limit (round robin; the one that just finished goes last), so sixteen runaway statements of one
 * organization hold `perKey` slots, not the process. A caller that has not started by `deadlineMs`
 * gets QueueDeadline, which the service layer turns into 503 with Retry-After.
 *
 * In memory on purpose: it bounds this process's connections, which no other process shares; each
 * replica has its own pool and its own queue.
 */
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

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
}

interface Line {
  running: number;
  waiting: Waiter[];
}

export class FairQueue {
  private readonly lines = new Map<string, Line>();
  /** Organizations with someone waiting, in the order they are served next. */
  private readonly turn: string[] = [];
  private running = 0;

  constructor(readonly limits: { total: number; perKey: number; deadlineMs: number }) {}

  /** Runs `work` once a slot of `key` is free; throws QueueDeadline when none was free in time. */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    await this.acquire(key);
    try {
      return await work();
    } finally {
      this.release(key);
    }
  }

  /** What is running and waiting, per key (tests, diagnostics). */
  snapshot(): { running: number; lines: Record<string, { running: number; waiting: number }> } {
    return { running: this.running, lines: Object.fromEntries([...this.lines].map(([key, line]) => [key, { running: line.running, waiting: line.waiting.length }])) };
  }

  private line(key: string): Line {
    let line = this.lines.get(key);
    if (!line) {
      line = { running: 0, waiting: [] };
      this.lines.set(key, line);
    }
    return line;
  }

  private acquire(key: string): Promise<void> {
    const line = this.line(key);
    if (line.waiting.length === 0 && line.running < this.limits.perKey && this.running < this.limits.total) {
      line.running++;
      this.running++;
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
          if (line.waiting.length === 0) this.turn.splice(this.turn.indexOf(key), 1);
          this.forget(key);
          reject(new QueueDeadline(Date.now() - queuedAt));
        }, this.limits.deadlineMs),
      };
      line.waiting.push(waiter);
      if (!this.turn.includes(key)) this.turn.push(key);
    });
  }

  private release(key: string): void {
    const line = this.line(key);
    line.running--;
    this.running--;
    // The organization that just had a slot waits behind the others for its next one.
    const place = this.turn.indexOf(key);
    if (place !== -1) this.turn.push(...this.turn.splice(place, 1));
    this.dispatch();
    this.forget(key);
  }

  /** Starts waiters while slots are free, taking organizations in turn. */
  private dispatch(): void {
    let scanned = 0;
    while (this.running < this.limits.total && scanned < this.turn.length) {
      const key = this.turn.shift()!;
      const line = this.line(key);
      if (line.running < this.limits.perKey && line.waiting.length > 0) {
        const waiter = line.waiting.shift()!;
        line.running++;
        this.running++;
        waiter.start();
        scanned = 0;
      } else {
        scanned++;
      }
      if (line.waiting.length > 0) this.turn.push(key);
    }
  }

  private forget(key: string): void {
    const line = this.lines.get(key);
    if (line && line.running === 0 && line.waiting.length === 0) this.lines.delete(key);
  }
}
