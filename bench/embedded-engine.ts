// `npm run bench -- embedded-engine [round-trips]`: the two ways to run PGlite off the request
// thread, beside PGlite in the calling thread (today's baseline), on the same seeded data:
//   in-process  PGlite in this thread (what a runaway statement freezes);
//   socket      PGlite in a child process behind the wire protocol, reached with pg (the chosen design);
//   worker      PGlite in a worker_thread behind a message-port proxy.
// Prints boot time, one query's round trip (p50/p95), a dashboard-like batch of 8 aggregates, and how
// long a kill during a runaway statement takes until the next query is answered.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite/vector";
import { configSingleton } from "@/lib/config";
import { closeDb, getDb } from "@/lib/db/client";
import { seedDemo } from "@/lib/demo/seed";
import { EmbeddedEngine } from "@/lib/db/embedded-engine";

const BATCH = [
  "SELECT sum(amount)::float8 AS revenue, count(*)::int AS orders FROM orders WHERE org_id = 'org_acme'",
  "SELECT location_id, sum(amount)::float8 AS revenue FROM orders WHERE org_id = 'org_acme' GROUP BY 1 ORDER BY 2 DESC",
  "SELECT channel, count(*)::int AS n FROM orders WHERE org_id = 'org_acme' GROUP BY 1",
  "SELECT date_trunc('month', order_date) AS month, sum(amount)::float8 AS revenue FROM orders WHERE org_id = 'org_acme' GROUP BY 1 ORDER BY 1",
  "SELECT product_id, sum(quantity)::int AS units FROM orders WHERE org_id = 'org_acme' GROUP BY 1 ORDER BY 2 DESC LIMIT 10",
  "SELECT (sum(amount - cost) / nullif(sum(amount), 0))::float8 AS margin FROM orders WHERE org_id = 'org_acme'",
  "SELECT count(DISTINCT customer_id)::int AS customers FROM orders WHERE org_id = 'org_acme'",
  "SELECT l.region, sum(o.amount)::float8 AS revenue FROM orders o JOIN locations l ON l.id = o.location_id WHERE o.org_id = 'org_acme' GROUP BY 1",
];
const RUNAWAY = "SELECT count(*) FROM generate_series(1, 1000000000)";

interface Engine {
  query(sql: string, params?: unknown[]): Promise<unknown>;
  /** Kills the engine while RUNAWAY runs and resolves once a new one answers. */
  killDuringRunaway(): Promise<void>;
  close(): Promise<void>;
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

async function inProcess(dataDir: string): Promise<Engine> {
  const db = await PGlite.create({ dataDir, extensions: { vector } });
  return {
    query: (sql, params) => db.query(sql, params),
    // Nothing can stop it: the statement holds this very thread until it ends.
    killDuringRunaway: () => Promise.reject(new Error("cannot be stopped")),
    close: () => db.close(),
  };
}

async function socket(dataDir: string): Promise<Engine> {
  let engine = new EmbeddedEngine({ dataDir, defaultLimitMs: 600_000, name: "bench" });
  await engine.start();
  return {
    query: (sql, params) => engine.pool.query(sql, params),
    killDuringRunaway: async () => {
      const runaway = engine.pool.query(RUNAWAY).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await engine.restart("bench kill");
      await runaway;
      await engine.pool.query("SELECT 1");
    },
    close: async () => {
      await engine.close();
      engine = undefined as unknown as EmbeddedEngine;
    },
  };
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
(async () => {
  const { PGlite } = await import("@electric-sql/pglite");
  const { vector } = await import("@electric-sql/pglite/vector");
  const db = await PGlite.create({ dataDir: workerData.dataDir, extensions: { vector } });
  parentPort.on("message", async ({ id, sql, params }) => {
    try { parentPort.postMessage({ id, rows: (await db.query(sql, params)).rows }); }
    catch (error) { parentPort.postMessage({ id, error: String(error) }); }
  });
  parentPort.postMessage({ ready: true });
})();
`;

async function worker(dataDir: string): Promise<Engine> {
  let current: { worker: Worker; pending: Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }> };
  let ids = 0;
  const boot = () =>
    new Promise<void>((resolve, reject) => {
      const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { dataDir } });
      const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
      current = { worker: w, pending };
      w.on("message", (m: { ready?: boolean; id?: number; rows?: unknown; error?: string }) => {
        if (m.ready) return resolve();
        const waiting = pending.get(m.id!);
        pending.delete(m.id!);
        if (m.error) waiting?.reject(new Error(m.error));
        else waiting?.resolve(m.rows);
      });
      w.on("error", reject);
      w.on("exit", () => pending.forEach((p) => p.reject(new Error("worker ended"))));
    });
  await boot();
  const query = (sql: string, params?: unknown[]) =>
    new Promise((resolve, reject) => {
      const id = ++ids;
      current.pending.set(id, { resolve, reject });
      current.worker.postMessage({ id, sql, params });
    });
  return {
    query,
    killDuringRunaway: async () => {
      const runaway = query(RUNAWAY).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await current.worker.terminate();
      await runaway;
      await boot();
      await query("SELECT 1");
    },
    close: async () => void (await current.worker.terminate()),
  };
}

async function measure(name: string, open: (dir: string) => Promise<Engine>, seeded: string, roundTrips: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `quarry-bench-${name}-`));
  fs.cpSync(seeded, dir, { recursive: true });
  try {
    let started = performance.now();
    const engine = await open(dir);
    const bootMs = performance.now() - started;
    for (let i = 0; i < 20; i++) await engine.query("SELECT $1::int AS n", [i]);
    const trips: number[] = [];
    for (let i = 0; i < roundTrips; i++) {
      started = performance.now();
      await engine.query("SELECT $1::int AS n", [i]);
      trips.push(performance.now() - started);
    }
    for (const sql of BATCH) await engine.query(sql);
    const batches: number[] = [];
    for (let i = 0; i < 5; i++) {
      started = performance.now();
      for (const sql of BATCH) await engine.query(sql);
      batches.push(performance.now() - started);
    }
    started = performance.now();
    const killed = await engine.killDuringRunaway().then(
      () => `${((performance.now() - started - 500) / 1000).toFixed(2)} s to the next answer`,
      (error: Error) => error.message,
    );
    await engine.close();
    return { name, bootMs, p50: percentile(trips, 50), p95: percentile(trips, 95), batch: percentile(batches, 50), killed };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export default async function bench(args: string[]): Promise<void> {
  const roundTrips = Number(args[0] ?? 300);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-bench-seed-"));
  process.env.QUARRY_DATA_DIR = root;
  process.env.QUARRY_SEED_DEMO = "true";
  delete process.env.DATABASE_URL;
  configSingleton.set(undefined);
  // The engine process and its IPC channel do not keep a script alive (embedded-engine.ts): while one
  // is killed and started again nothing else would, and the bench ended silently before its figures.
  const keepAlive = setInterval(() => undefined, 60_000);
  try {
    await seedDemo((await getDb()).system);
    await closeDb();
    const seeded = path.join(root, "pglite");
    console.log(`embedded engine designs on the seeded demo data: ${roundTrips} round trips of SELECT $1, batch of ${BATCH.length} dashboard aggregates (median of 5)`);
    const results = [];
    for (const [name, open] of [["in-process", inProcess], ["socket", socket], ["worker", worker]] as const) results.push(await measure(name, open, seeded, roundTrips));
    const base = results[0];
    for (const r of results) {
      console.log(
        `  ${r.name.padEnd(10)} boot ${(r.bootMs / 1000).toFixed(2)} s  round trip p50 ${r.p50.toFixed(2)} ms p95 ${r.p95.toFixed(2)} ms (x${(r.p50 / base.p50).toFixed(1)})  batch ${r.batch.toFixed(0)} ms (x${(r.batch / base.batch).toFixed(2)})  kill during a runaway: ${r.killed}`,
      );
    }
  } finally {
    clearInterval(keepAlive);
    fs.rmSync(root, { recursive: true, force: true });
  }
}
