import "server-only";
import fs from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { config } from "@/lib/config";
import type { Database } from "@/lib/db/client";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-singleton";

/**
 * `to_tsvector('english', t)` of each text in binary (`tsvectorsend`: the bytes binary COPY takes
 * for a tsvector column), in order. Run by another instance of the database's own engine, so the
 * lexemes are those the database would compute itself (migration 0020's trigger, queries'
 * to_tsquery): never a reimplementation.
 */
export const TSVECTOR_SQL =
  "SELECT pg_catalog.tsvectorsend(pg_catalog.to_tsvector('english'::pg_catalog.regconfig, t)) AS v FROM unnest($1::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n";

/**
 * An embedded calculator unused this long is stopped (it holds an engine's memory, about 400 MB);
 * the next document starts it again (about a second), so one minute covers a burst of uploads.
 */
const WORKER_IDLE_MS = 60_000;
/** A calculator that has not answered one batch within this long is given up on (the database computes instead). */
export const TSVECTOR_BATCH_LIMIT_MS = 10_000;

/** Computes chunks' tsvectors off the database's write path; see docs/search.md. */
export interface TsvectorCalculator {
  /**
   * The tsvectors of `texts`, or null when the calculator cannot take work now (starting, failed):
   * the caller then lets the database compute them. Never rejects; answers null after
   * TSVECTOR_BATCH_LIMIT_MS too (an embedded worker that slow is stopped and started anew later).
   * `scope` names the run the texts belong to: the embedded worker remembers the pieces of a scope's
   * texts (tsvector-pieces.ts) for its later calls, never across scopes.
   */
  compute(texts: string[], scope: string): Promise<Uint8Array[] | null>;
}

/**
 * PostgreSQL: a second backend from the pool (the server has cores to spare while another backend
 * stores). Embedded: an in-memory PGlite in a worker thread (tsvector-worker.mjs), started on first
 * use and kept while documents keep coming; until it is up, compute() answers null. Null when the
 * embedded worker is turned off (QUARRY_EMBEDDED_TSVECTOR_WORKER=false: small machines keep its
 * memory and the database computes every tsvector).
 */
export function tsvectorCalculator(db: Database): TsvectorCalculator | null {
  if (db.kind === "postgres") {
    return {
      compute: (texts) =>
        withinLimit(
          db.pool.query<{ v: Buffer }>(TSVECTOR_SQL, [texts]).then(
            (result) => result.rows.map((row) => row.v),
            (error: unknown) => {
              log.warn("tsvector calculator failed; the database computes the batch", { error: String(error) });
              return null;
            },
          ),
          () => undefined,
        ),
    };
  }
  const database = config().database;
  return database.kind === "pglite" && !database.tsvectorWorker ? null : embeddedCalculator.get();
}

/** `work`'s answer, or null once TSVECTOR_BATCH_LIMIT_MS have passed (then `onLate` runs). */
function withinLimit<T>(work: Promise<T | null>, onLate: () => void): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => {
      log.warn("tsvector calculator too slow; the database computes the batch", { limitMs: TSVECTOR_BATCH_LIMIT_MS });
      onLate();
      resolve(null);
    }, TSVECTOR_BATCH_LIMIT_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

const embeddedCalculator = processSingleton("tsvectorWorker", () => new TsvectorWorker());

/** The embedded calculator of this process (benches and tests warm or stop it). */
export const embeddedTsvectorWorker = (): TsvectorWorker => embeddedCalculator.get();

/** Resolved from the working directory and loaded unbundled, as lib/db/engine-process.mjs. */
const WORKER_FILE = path.join(/*turbopackIgnore: true*/ process.cwd(), "lib", "documents", "indexing", "tsvector-worker.mjs");

/** Where the calculator keeps its start-up dump, named by PGlite's version: another version's is never loaded. */
function templatePath(): string {
  const packageFile = path.join(/*turbopackIgnore: true*/ process.cwd(), "node_modules", "@electric-sql", "pglite", "package.json");
  const { version } = JSON.parse(fs.readFileSync(packageFile, "utf8")) as { version: string };
  return path.join(config().dataDir, `tsvector-engine-pglite-${version}.tar.gz`);
}

type Reply = { type: "ready"; bootMs: number } | { type: "failed"; error: string } | { id: number; tsv?: Uint8Array[]; error?: string };

/** The embedded calculator's worker thread: one job at a time in the worker, queued in order. */
export class TsvectorWorker implements TsvectorCalculator {
  private worker: Worker | undefined;
  private ready = false;
  private jobs = 0;
  private readonly pending = new Map<number, (tsv: Uint8Array[] | null) => void>();
  private idleTimer: NodeJS.Timeout | undefined;

  /** Whether the worker is up and taking work (tests, benches). */
  get isReady(): boolean {
    return this.ready;
  }

  /** Starts the worker if it is not running; resolves once it takes work (or has failed). */
  warm(): Promise<void> {
    if (this.ready) return Promise.resolve();
    const worker = this.worker ?? this.start();
    return new Promise((resolve) => {
      const check = (reply: Reply) => {
        if ("type" in reply) {
          worker.off("message", check);
          resolve();
        }
      };
      worker.on("message", check);
      worker.once("exit", () => resolve());
    });
  }

  compute(texts: string[], scope: string): Promise<Uint8Array[] | null> {
    if (!this.ready || !this.worker) {
      if (!this.worker) this.start();
      return Promise.resolve(null);
    }
    const worker = this.worker;
    const id = ++this.jobs;
    clearTimeout(this.idleTimer);
    if (this.pending.size === 0) worker.ref();
    const answer = new Promise<Uint8Array[] | null>((resolve) => {
      this.pending.set(id, resolve);
      worker.postMessage({ id, texts, scope });
    });
    return withinLimit(answer, () => {
      if (this.worker === worker) void this.stop();
    });
  }

  /** Stops the worker (idle, tests); a later compute() starts a new one. */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.reset();
    await worker?.terminate();
  }

  private start(): Worker {
    const worker = new Worker(WORKER_FILE, { workerData: { templatePath: templatePath() } });
    this.worker = worker;
    // Never what keeps a process alive: a job in flight refs it (compute), an idle one does not.
    worker.unref();
    worker.on("message", (reply: Reply) => {
      if ("type" in reply) {
        if (reply.type === "ready") {
          this.ready = true;
          this.armIdleTimer();
          log.info("tsvector calculator ready", { ms: reply.bootMs });
        } else {
          log.warn("tsvector calculator failed to start; the database computes text-search vectors", { error: reply.error });
          void this.stop();
        }
        return;
      }
      const resolve = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.error) log.warn("tsvector calculator failed; the database computes the batch", { error: reply.error });
      resolve?.(reply.tsv ?? null);
      if (this.pending.size === 0) {
        worker.unref();
        this.armIdleTimer();
      }
    });
    worker.on("error", (error) => log.warn("tsvector calculator stopped", { error: String(error) }));
    worker.on("exit", () => {
      if (this.worker === worker) this.reset();
    });
    return worker;
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.stop(), WORKER_IDLE_MS);
    this.idleTimer.unref();
  }

  /** Forgets the worker; jobs waiting on it get null (the database computes their batches). */
  private reset(): void {
    clearTimeout(this.idleTimer);
    this.worker = undefined;
    this.ready = false;
    for (const resolve of this.pending.values()) resolve(null);
    this.pending.clear();
  }
}
