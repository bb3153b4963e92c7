import { type ChildProcess, fork } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { log } from "@/lib/log";
import { heldDataDirLock } from "./data-dir-lock.mjs";
import { ForgetfulPool } from "./forgetful-pool";
import { READER_TABLES_CHANGED } from "./warehouse";

/**
 * Supervisor of one embedded engine: PGlite in a child process (lib/db/engine-process.mjs) served
 * over the PostgreSQL wire protocol on a Unix socket. The web process reaches it through an
 * ordinary `pg.Pool`, so embedded mode shares the `pg`/PrismaPg path of a PostgreSQL server.
 *
 * PGlite cannot cancel a statement, so the time limit is enforced here: every query is watched,
 * and one that passes its limit gets PostgreSQL's own 57014 error while the engine process is
 * killed and started again (crash recovery keeps every committed transaction). Connections asked
 * for during the restart wait for the new engine instead of failing.
 *
 * Design and measurements: docs/embedded-engine.md.
 */

/** Resolved from the working directory and loaded unbundled (as lib/documents/extract/pdf-worker.mjs); turbopackIgnore keeps Turbopack from tracing it. */
const ENGINE_FILE = path.join(/*turbopackIgnore: true*/ process.cwd(), "lib", "db", "engine-process.mjs");
/** A fresh data folder runs initdb, which took up to 30 s on a busy 2-core machine. */
const BOOT_TIMEOUT_MS = 120_000;

export type EngineState = "starting" | "ready" | "restarting" | "closed" | "failed";

export interface EmbeddedEngineOptions {
  dataDir: string;
  /** Limit for statements that set none themselves (migrations, the service role's work). */
  defaultLimitMs: number;
  /** Names the engine in logs (`primary`, `analytics`). */
  name?: string;
  /** Scheduling niceness of the engine process (0–19): the analytics engine yields the CPU to the app's. */
  niceness?: number;
  /** Sees the text of every statement sent (after it is sent): how the analytics copy learns of changed definitions. */
  onStatement?: (text: string) => void;
  /** A statement wrote a table the reader reads (its trigger's notice, READER_TABLES_CHANGED; `table` its detail, `schema.table`, when given). */
  onReaderTablesChanged?: (table: string | undefined) => void;
  /** PostgreSQL's shared_buffers in MB (PGlite's default is 128): pages it caches stay in the process's heap for good. */
  sharedBuffersMb?: number;
}

/** PostgreSQL's own error for a statement cut at its time limit, so every caller maps it as on a server. */
export class StatementTimeoutError extends Error {
  readonly code = "57014";
  readonly severity = "ERROR";
  readonly detail: string;
  constructor(readonly limitMs: number) {
    super("canceling statement due to statement timeout");
    this.name = "StatementTimeoutError";
    this.detail = `The query ran longer than its time limit of ${formatLimit(limitMs)}`;
  }
}

export function formatLimit(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

export class EmbeddedEngine {
  readonly pool: pg.Pool;
  readonly socketDir: string;
  restarts = 0;
  private requests = 0;
  private child: ChildProcess | undefined;
  private booting: Promise<void> | undefined;
  private stateValue: EngineState = "starting";
  /** close() was called: no restart may start another process. */
  private closeRequested = false;
  private readonly name: string;

  constructor(private readonly options: EmbeddedEngineOptions) {
    this.name = options.name ?? "primary";
    // Unix socket paths are limited to about 100 bytes, so the socket lives in a short temp folder.
    this.socketDir = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-engine-"));
    // The engine has one session, so one pooled connection: interleaved transactions would share it.
    // That one session outlives every lease: what a reader lease left in it is discarded (forgetful-pool.ts).
    this.pool = new ForgetfulPool(
      {
        host: this.socketDir,
        user: "postgres",
        database: "postgres",
        max: 1,
        idleTimeoutMillis: 0,
        Client: watchedClientClass(this),
      },
      { forget: "reader leases" },
    );
    // An idle connection dies with its engine on a restart; the pool drops it and connects again.
    this.pool.on("error", () => undefined);
  }

  get state(): EngineState {
    return this.stateValue;
  }

  get defaultLimitMs(): number {
    return this.options.defaultLimitMs;
  }

  /** When the last statement was sent (performance.now()): housekeeping waits for a quiet engine before it vacuums. */
  lastStatementAt = 0;

  /** @internal Called by the pool's clients for each statement. */
  noteStatement(text: string): void {
    this.lastStatementAt = performance.now();
    this.options.onStatement?.(text);
  }

  /** @internal Called by the pool's clients when a statement's trigger says it wrote a table the reader reads. */
  noteReaderTablesChanged(table: string | undefined): void {
    this.options.onReaderTablesChanged?.(table);
  }

  /** Starts the engine process; resolves once it accepts connections. */
  start(): Promise<void> {
    this.booting = this.spawn();
    return this.booting;
  }

  /** Resolves when an engine is up (waiting out a restart); rejects once closed. */
  async ready(): Promise<void> {
    if (this.stateValue === "closed") throw new Error("the embedded database is closed");
    if (!this.booting) throw new Error("the embedded database was not started");
    await this.booting;
  }

  /**
   * Kills the engine process at once (a statement ran past its limit, or a test's crash) and
   * starts a new one on the same data folder.
   */
  restart(reason: string, fields: Record<string, unknown> = {}, beforeStart?: () => Promise<void>): Promise<void> {
    if (this.stateValue === "closed" || this.closeRequested) return Promise.resolve();
    this.restarts += 1;
    this.stateValue = "restarting";
    log.warn("embedded database restarted", { engine: this.name, reason, ...fields });
    const dying = this.child;
    this.child = undefined;
    dying?.removeAllListeners("exit");
    dying?.kill("SIGKILL");
    const exited = dying && dying.exitCode === null && dying.signalCode === null ? new Promise<void>((resolve) => dying.once("exit", () => resolve())) : Promise.resolve();
    this.booting = exited.then(async () => {
      // Closed while the old process was dying: starting another would outlive the close, and find its socket folder gone.
      if (this.stateValue === "closed" || this.closeRequested) return;
      await beforeStart?.();
      await this.spawn();
    });
    return this.booting;
  }

  /**
   * Replaces this engine's data with a new copy: waits for the work in flight (the pool's one
   * connection is held), stops the engine, runs `copy` into its data folder, and starts it again.
   */
  async reload(copy: (dataDir: string) => Promise<void>): Promise<void> {
    const client = await this.pool.connect();
    try {
      await this.restart("reloading a fresh copy of the data", {}, () => copy(this.options.dataDir));
    } finally {
      client.release(new Error("engine reloaded"));
    }
  }

  /**
   * Copies the data folder, consistent, to `target`: the engine process runs CHECKPOINT and copies
   * its folder between two statements, while the pool's one connection is held here (so no
   * transaction is open on the engine's single session).
   */
  async snapshot(target: string): Promise<void> {
    const client = await this.pool.connect();
    try {
      await this.request({ type: "snapshot", target });
    } finally {
      client.release();
    }
  }

  /**
   * Each table's rows in binary COPY format, all read at one point of the primary's history: the pool's
   * one connection is held here, so no transaction is open or starts while they are read (as `snapshot`).
   * `tables` are qualified names the caller has checked; read as the engine's superuser, past row-level security.
   */
  async exportTables(tables: readonly string[]): Promise<Map<string, Uint8Array>> {
    const client = await this.pool.connect();
    try {
      const copies = new Map<string, Uint8Array>();
      for (const table of tables) copies.set(table, await this.request<Uint8Array>({ type: "copyOut", sql: `COPY (SELECT * FROM ${table}) TO '/dev/blob' WITH (FORMAT binary)` }));
      return copies;
    } finally {
      client.release();
    }
  }

  private request<T = void>(message: Record<string, unknown>): Promise<T> {
    const child = this.child;
    if (!child) return Promise.reject(new Error("the embedded database is restarting"));
    const id = ++this.requests;
    return new Promise<T>((resolve, reject) => {
      const onMessage = (reply: { type: string; id?: number; error?: string; data?: T }) => {
        if (reply.id !== id) return;
        child.off("message", onMessage);
        child.off("exit", onExit);
        if (reply.type === "done") resolve(reply.data as T);
        else reject(Object.assign(new Error(reply.error ?? "the engine request failed"), { code: "XX000", severity: "ERROR" }));
      };
      const onExit = () => {
        child.off("message", onMessage);
        reject(new Error("the embedded database stopped during the request"));
      };
      child.on("message", onMessage);
      child.once("exit", onExit);
      child.send({ ...message, id });
    });
  }

  /**
   * COPY … FROM STDIN with the whole input in `data`, in the session of the pool's one connection,
   * which the caller holds (lib/db/bulk.ts: inside its transaction, before SET LOCAL ROLE).
   * pglite-socket cannot carry COPY FROM STDIN (PGlite's backend reads the copy data within the
   * COPY message's own call, before the client may send it: "unexpected EOF"), so the data goes to
   * the engine process over IPC and PGlite reads it from `/dev/blob`, on its one session: the
   * caller's open transaction.
   */
  async copyInSession(sql: string, data: Uint8Array): Promise<void> {
    if (!/\bFROM\s+STDIN\b/i.test(sql)) throw new Error("copyInSession takes COPY … FROM STDIN");
    await this.request({ type: "copy", sql: sql.replace(/\bFROM\s+STDIN\b/i, "FROM '/dev/blob'"), data });
  }

  async close(): Promise<void> {
    if (this.stateValue === "closed") return;
    this.closeRequested = true;
    // A close during a start waits for it to settle: a booting engine sent "close" before it is open
    // never answers, and its start would hang until the boot timeout (an idle analytics engine
    // stopped while it restarted after a runaway).
    await this.booting?.catch(() => undefined);
    await this.pool.end().catch(() => undefined);
    this.stateValue = "closed";
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null) {
      child.removeAllListeners("exit");
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      if (child.connected) child.send({ type: "close" });
      else child.kill("SIGKILL");
      // PGlite's close writes its buffers; a hung one is killed rather than holding the caller.
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    fs.rmSync(this.socketDir, { recursive: true, force: true });
  }

  private spawn(): Promise<void> {
    const started = Date.now();
    return new Promise<void>((resolve, reject) => {
      // The engine is a plain Node process: no Next.js or vitest loader flags are inherited.
      const child = fork(ENGINE_FILE, [], { cwd: process.cwd(), execArgv: [], serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] });
      this.child = child;
      // A message to an engine whose channel has already closed (killed while it started, then closed) is an
      // `error` event; unheard, it would end this whole process. Its exit is handled below.
      child.on("error", (error) => log.warn("embedded database process unreachable", { engine: this.name, error: error.message }));
      // The engine never keeps a script alive on its own (the pool's connection does while in use).
      child.unref();
      child.channel?.unref();
      if (this.options.niceness && child.pid) {
        try {
          os.setPriority(child.pid, this.options.niceness);
        } catch {
          // Not permitted here (some containers): the engine runs at normal priority.
        }
      }
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        fail(new Error(`the embedded database did not start within ${BOOT_TIMEOUT_MS / 1000} s`));
      }, BOOT_TIMEOUT_MS);
      const fail = (error: Error) => {
        clearTimeout(timer);
        this.stateValue = "failed";
        reject(error);
      };
      child.once("message", (message: { type: string; message?: string; bootMs?: number }) => {
        if (message.type !== "ready") return fail(new Error(`the embedded database failed to start: ${message.message ?? "unknown error"}`));
        clearTimeout(timer);
        this.stateValue = "ready";
        if (this.restarts > 0) log.info("embedded database back", { engine: this.name, ms: Date.now() - started });
        resolve();
      });
      child.once("exit", (code, signal) => {
        if (this.stateValue === "starting" || this.stateValue === "restarting") return fail(new Error(`the embedded database exited during start (code ${code}, signal ${signal})`));
        if (this.stateValue === "closed") return;
        // Crashed on its own (out of memory, a WebAssembly trap): start it again.
        void this.restart("engine process exited", { code, signal }).catch((error: unknown) => log.error("embedded database did not restart", { engine: this.name, error: String(error) }));
      });
      // The data folder's lock goes with the engine, which holds it until it exits (lib/db/data-dir-lock.mjs).
      const lock = heldDataDirLock(this.options.dataDir);
      if (lock) child.send({ type: "lock", holder: lock.holder }, lock.server);
      child.send({ type: "open", dataDir: this.options.dataDir, socketPath: path.join(this.socketDir, ".s.PGSQL.5432"), sharedBuffersMb: this.options.sharedBuffersMb });
    });
  }
}

/**
 * `quarry_enter_tenant($1, $2, $3, $n, …)` (withTenant: the fourth argument is the statement timeout,
 * migration 0017), `set_config('statement_timeout', $n, true)` or `SET [LOCAL] statement_timeout = …`.
 */
const SET_CONFIG_TIMEOUT = /(?:set_config\(\s*'statement_timeout'|quarry_enter_tenant\(\s*\$\d+\s*,\s*\$\d+\s*,\s*\$\d+)\s*,\s*\$(\d+)/i;
const SET_TIMEOUT = /^\s*SET\s+(?:LOCAL\s+|SESSION\s+)?statement_timeout\s*(?:=|TO)\s*'?(\d+)(ms|s)?'?/i;
const TRANSACTION_END = /^\s*(COMMIT|ROLLBACK|END|ABORT)\b/i;

/** The time limit a statement asks for, or undefined when it sets none. */
export function requestedLimitMs(text: string, values: readonly unknown[] | undefined): number | undefined {
  const bound = SET_CONFIG_TIMEOUT.exec(text);
  if (bound) {
    const ms = Number(values?.[Number(bound[1]) - 1]);
    return Number.isFinite(ms) ? ms : undefined;
  }
  const literal = SET_TIMEOUT.exec(text);
  if (literal) return Number(literal[1]) * (literal[2]?.toLowerCase() === "s" ? 1000 : 1);
  return undefined;
}

/**
 * pg.Clients that wait for the engine before connecting and watch each query against the current
 * time limit (the transaction's statement_timeout once set, else the engine's default). Built by
 * wrapping an instance's methods: pg's overloaded signatures cannot be restated in a subclass.
 */
function watchedClientClass(engine: EmbeddedEngine): typeof pg.Client {
  function WatchedClient(config: pg.ClientConfig): pg.Client {
    const client = new pg.Client(config);
    // A connection lost with its engine (a restart) rejects its query; the event itself is expected.
    client.on("error", () => undefined);
    client.on("notice", (notice) => {
      if (notice.message === READER_TABLES_CHANGED) engine.noteReaderTablesChanged(notice.detail);
    });
    const connect = client.connect.bind(client) as () => Promise<unknown>;
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    /** statement_timeout set in the current transaction (0 or unset: the default applies). */
    let limitMs: number | undefined;
    const methods = client as unknown as { connect: (callback?: (error?: Error) => void) => Promise<void>; query: (...args: unknown[]) => unknown };
    // pg.Pool calls connect(callback); other callers use the promise form.
    methods.connect = (callback) => {
      const connected = engine.ready().then(connect).then(() => undefined);
      if (callback) connected.then(() => callback(), callback);
      return connected;
    };
    methods.query = (...args) => {
      const [first, second] = args;
      const text = typeof first === "string" ? first : String((first as { text?: unknown })?.text ?? "");
      // Every statement is seen (pg.Pool#query calls with a callback: a write there must mark the analytics copy stale too).
      engine.noteStatement(text);
      // Submittables (COPY streams, cursors) and callback calls go through without a time limit: bulk and owner paths.
      if (typeof (first as { submit?: unknown })?.submit === "function" || typeof args[args.length - 1] === "function") return query(...args);
      const values = (typeof first === "string" ? second : (first as { values?: unknown })?.values) as unknown[] | undefined;
      const limit = limitMs && limitMs > 0 ? limitMs : engine.defaultLimitMs;
      const running = query(...args) as Promise<unknown>;
      const requested = requestedLimitMs(text, values);
      if (requested !== undefined) limitMs = requested;
      else if (TRANSACTION_END.test(text)) limitMs = undefined;
      return watch(engine, running, limit, text);
    };
    return client;
  }
  return WatchedClient as unknown as typeof pg.Client;
}

function watch<T>(engine: EmbeddedEngine, running: Promise<T>, limitMs: number, text: string): Promise<T> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void engine.restart("a statement ran past its time limit", { limitMs, statement: text.slice(0, 200) }).catch(() => undefined);
  }, limitMs);
  return running.then(
    (result) => {
      clearTimeout(timer);
      return result;
    },
    (error: unknown) => {
      clearTimeout(timer);
      throw timedOut ? new StatementTimeoutError(limitMs) : error;
    },
  );
}
