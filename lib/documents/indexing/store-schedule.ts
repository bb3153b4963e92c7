import { randomUUID } from "node:crypto";
import type { DocumentChunk } from "../extract/chunk";
import type { TsvectorCalculator } from "./tsvector-calculator";

/**
 * Chunks per unit of work: one job of the tsvector calculator, and the grain of store batches. 32
 * keeps a calculator job's fixed cost small (unit 8 cost a fifth more per chunk, measured) while a
 * store batch can still follow the calculator closely.
 */
export const UNIT_CHUNKS = 32;

export interface StoreScheduleOptions {
  /** Chunks per embedding call and at most per store batch: a whole number of units. */
  batchChunks: number;
  /** The vectors of `texts`, in order (the embedding provider). */
  embed: (texts: string[], signal: AbortSignal) => Promise<number[][]>;
  /** Null: the database computes every tsvector. */
  calculator: TsvectorCalculator | null;
  signal: AbortSignal;
}

/** What one store transaction writes: whole units, not necessarily adjacent ones. */
export interface ScheduledBatch {
  chunks: DocumentChunk[];
  vectors: number[][];
  /** Per chunk, its tsvector from the calculator, or null where the database is to compute it. */
  tsv: (Uint8Array | null)[];
}

type UnitState = "open" | "computing" | "computed" | "taken";

interface Unit {
  chunks: DocumentChunk[];
  state: UnitState;
  vectors?: number[][];
  tsv?: Uint8Array[];
}

/**
 * Decides what each store batch of an indexing run takes, and which side computes each chunk's
 * tsvector: the tsvector calculator, off the database's write path, or the database as it stores
 * (its trigger; docs/search.md). Both are about equally fast at text search, and storing a chunk
 * whose tsvector is supplied costs the database about as much again, so the run is shortest when
 * neither ever waits for the other:
 *
 * - the calculator takes units from the front, in order, one at a time;
 * - the store takes the units the calculator has finished (up to a batch) whenever there are any;
 *   when there are none it takes one unit the calculator has not reached, from the far end of what
 *   is embedded, and the database computes its tsvectors; the two meet where their speeds put them;
 * - without a calculator (none, starting, failed) the store takes whole batches in order.
 *
 * Embedding runs ahead of the store in calls of a batch (the first batch in two: one unit, then the
 * rest), in order, at most AHEAD_BATCHES batches beyond the first unit not yet taken, and the
 * calculator no further: the memory a run holds stays bounded whatever the document's length.
 */
export class StoreSchedule {
  private readonly units: Unit[] = [];
  private readonly batchUnits: number;
  private calculatorRunning: boolean;
  private failure: unknown = undefined;
  private waiters: (() => void)[] = [];
  /** The first unit not yet taken by the store (the front of the window of work in progress). */
  private front = 0;
  private taken = 0;
  /** This run's texts to the calculator: it may remember their pieces within the run, never beyond. */
  private readonly calculatorScope = randomUUID();

  constructor(
    chunks: DocumentChunk[],
    private readonly options: StoreScheduleOptions,
  ) {
    if (options.batchChunks % UNIT_CHUNKS !== 0) throw new Error("a store batch must be a whole number of units");
    this.batchUnits = options.batchChunks / UNIT_CHUNKS;
    for (let i = 0; i < chunks.length; i += UNIT_CHUNKS) this.units.push({ chunks: chunks.slice(i, i + UNIT_CHUNKS), state: "open" });
    this.calculatorRunning = options.calculator !== null;
    options.signal.addEventListener("abort", () => this.notify(), { once: true });
    void this.embedAll();
    if (options.calculator) void this.calculate(options.calculator);
  }

  /** How far embedding and the calculator may run beyond the front, in batches. */
  static readonly AHEAD_BATCHES = 4;

  /**
   * The next batch to store, once it can be chosen; null when every chunk has been taken. Rejects
   * with the embedding's failure, or the signal's reason.
   */
  async next(): Promise<ScheduledBatch | null> {
    for (;;) {
      if (this.failure !== undefined) throw this.failure;
      this.options.signal.throwIfAborted();
      if (this.taken === this.units.length) return null;
      const computed = this.units.filter((u) => u.state === "computed" && u.vectors).slice(0, this.batchUnits);
      if (computed.length > 0) return this.take(computed);
      const open = this.units.filter((u) => u.state === "open" && u.vectors);
      if (this.calculatorRunning && open.length > 0) return this.take(open.slice(-1));
      // In order, and only whole batches while more are being embedded (fewer transactions).
      if (open.length >= this.batchUnits || (open.length > 0 && this.embeddedAll())) return this.take(open.slice(0, this.batchUnits));
      await this.changed();
    }
  }

  private take(units: Unit[]): ScheduledBatch {
    const batch: ScheduledBatch = { chunks: [], vectors: [], tsv: [] };
    for (const unit of units) {
      batch.chunks.push(...unit.chunks);
      batch.vectors.push(...unit.vectors!);
      batch.tsv.push(...(unit.tsv ?? unit.chunks.map(() => null)));
      unit.state = "taken";
      // The store owns them now: what it needs no longer stays in memory here.
      unit.vectors = undefined;
      unit.tsv = undefined;
    }
    this.taken += units.length;
    while (this.front < this.units.length && this.units[this.front].state === "taken") this.front++;
    this.notify();
    return batch;
  }

  private embeddedAll(): boolean {
    return this.units.every((u) => u.vectors || u.state === "taken");
  }

  /** The end (exclusive) of the units embedding and the calculator may work on now. */
  private windowEnd(): number {
    return this.front + StoreSchedule.AHEAD_BATCHES * this.batchUnits;
  }

  private async embedAll(): Promise<void> {
    const { signal } = this.options;
    try {
      // The first call embeds one unit, the second the rest of the first batch: the database, idle
      // until then, can start storing as soon as one unit is embedded rather than a whole batch (a
      // remote provider answers a short call sooner too).
      for (let first = 0, size = 1; first < this.units.length; first += size, size = this.batchUnits - (first % this.batchUnits)) {
        while (first >= this.windowEnd()) {
          signal.throwIfAborted();
          await this.changed();
        }
        signal.throwIfAborted();
        const units = this.units.slice(first, first + size);
        const vectors = await this.options.embed(units.flatMap((u) => u.chunks.map((c) => c.text)), signal);
        let at = 0;
        for (const unit of units) {
          unit.vectors = vectors.slice(at, at + unit.chunks.length);
          at += unit.chunks.length;
        }
        this.notify();
      }
    } catch (error) {
      if (this.failure === undefined) this.failure = error;
      this.notify();
    }
  }

  private async calculate(calculator: TsvectorCalculator): Promise<void> {
    const { signal } = this.options;
    try {
      let u = 0;
      while (u < this.units.length && !signal.aborted) {
        const unit = this.units[u];
        if (unit.state !== "open") {
          u++;
        } else if (u >= this.windowEnd()) {
          await this.changed();
        } else {
          unit.state = "computing";
          const tsv = await calculator.compute(unit.chunks.map((c) => c.text), this.calculatorScope);
          // Unavailable (starting, failed) or too slow: the database computes what is left.
          if (tsv === null) {
            unit.state = "open";
            return;
          }
          unit.tsv = tsv;
          unit.state = "computed";
          this.notify();
        }
      }
    } finally {
      this.calculatorRunning = false;
      this.notify();
    }
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
