// npm run bench -- embedded-memory: the memory of the embedded default's whole process tree (the web
// server with its threads, the primary engine, the analytics engines), PSS and RSS per process from
// /proc/<pid>/smaps_rollup, at four moments: idle after the first boot, just after use (the sample
// dashboard's queries with fresh filters, every demo document indexed, searches), idle again, and
// idle after a restart on the same data; "idle" is 70 s on, past the idle timers. Baseline in the same run: the same server on PostgreSQL (QUARRY_TEST_DATABASE_URL,
// when set), whose tree is Node alone. Needs a build (`npm run build`). Issue 31 aims: <= 700 MB
// for the embedded tree idle after boot, <= 1 GB after indexing and dashboard use.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { MALLOC_ENV } from "../scripts/malloc-env.mjs";

interface ProcessMemory {
  pid: number;
  label: string;
  pssMb: number;
  rssMb: number;
}

/** Analytics engines stop after this long idle in this run (the default is 5 min). */
const ANALYTICS_IDLE_MS = 5_000;
/** Past every idle timer: the analytics engines' (ANALYTICS_IDLE_MS here) and the tsvector worker's (60 s). */
const SETTLE_MS = 70_000;

function childrenOf(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/<pid>/stat, after the parenthesised command (which may hold spaces).
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // The process ended while we read.
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, parent] of parents) if (parent === tree[i]) tree.push(pid);
  return tree;
}

function labelOf(pid: number): string {
  const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  if (cmdline.includes("engine-process")) {
    // An engine names no data folder on its command line; its open files do.
    const folders = new Set<string>();
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      const target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`, { encoding: "utf8" } as never) as unknown as string;
      const match = /\/(pglite(?:-analytics(?:-\d+)?)?)\//.exec(String(target));
      if (match) folders.add(match[1]);
    }
    return `engine ${[...folders].join(",") || "(no data file open)"}`;
  }
  if (cmdline.includes("server.mjs")) return "web server";
  return cmdline.slice(0, 60);
}

function measure(root: number): ProcessMemory[] {
  const rows: ProcessMemory[] = [];
  for (const pid of childrenOf(root)) {
    try {
      const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
      const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(rollup)?.[1] ?? 0);
      rows.push({ pid, label: labelOf(pid), pssMb: kb("Pss") / 1024, rssMb: kb("Rss") / 1024 });
    } catch {
      // Ended while measured.
    }
  }
  return rows.filter((row) => row.rssMb > 0);
}

function print(title: string, rows: ProcessMemory[]): number {
  const total = rows.reduce((sum, row) => sum + row.pssMb, 0);
  console.log(`  ${title}: ${total.toFixed(0)} MB PSS in ${rows.length} processes`);
  for (const row of rows) console.log(`    ${row.label.padEnd(42)} PSS ${row.pssMb.toFixed(0).padStart(5)} MB  RSS ${row.rssMb.toFixed(0).padStart(5)} MB`);
  return total;
}

async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startServer(env: Record<string, string>, dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-memory-"))): Promise<{ server: ChildProcess; base: string; dataDir: string }> {
  const port = String(3900 + Math.floor(Math.random() * 90));
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(process.execPath, ["scripts/server.mjs"], {
    // The allocator settings scripts/start.mjs (what `npm start` runs) sets.
    env: { ...MALLOC_ENV, ...process.env, ...env, PORT: port, NODE_ENV: "production", QUARRY_DATA_DIR: dataDir, QUARRY_PUBLIC_URL: base, NEXTAUTH_URL: base, QUARRY_LOG_LEVEL: "warn", QUARRY_RATE_LIMIT_MULTIPLIER: "100", QUARRY_EMBEDDED_ANALYTICS_IDLE_MS: String(ANALYTICS_IDLE_MS) },
    stdio: ["ignore", "ignore", "inherit"],
  });
  await until(async () => (await fetch(`${base}/api/ready`)).ok, 300_000, "the server ready");
  return { server, base, dataDir };
}

function token(dataDir: string, env: Record<string, string>): string {
  const out = execFileSync(process.execPath, ["node_modules/tsx/dist/cli.mjs", "--conditions=react-server", "scripts/token.ts", "--org", "acme", "--role", "admin"], {
    env: { ...process.env, ...env, QUARRY_DATA_DIR: dataDir, QUARRY_LOG_LEVEL: "error" },
    encoding: "utf8",
  });
  return out.trim().split("\n").at(-1) ?? "";
}

async function exercise(base: string, bearer: string): Promise<void> {
  const api = async <T,>(method: string, url: string, body?: unknown): Promise<T> => {
    // A busy engine answers 503 with Retry-After (on a loaded machine too); the viewer waits and asks again, and so does this.
    for (let attempt = 1; ; attempt++) {
      const res = await fetch(`${base}${url}`, { method, headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
      if (res.status === 503 && attempt < 5) {
        await sleep(Number(res.headers.get("retry-after") ?? 5) * 1000);
        continue;
      }
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    }
  };
  const dashboards = await api<{ items: { id: string; slug: string }[] }>("GET", "/api/v1/custom-dashboards");
  const sample = dashboards.items.find((d) => d.slug === "sample-sales") ?? dashboards.items[0];
  for (let month = 1; month <= 9; month++) await api("POST", `/api/v1/custom-dashboards/${sample.id}/query`, { filters: { date: `2026-0${month}-01 to 2026-0${month}-20` } });
  const documents = await api<{ items: { id: string }[] }>("GET", "/api/v1/documents");
  for (const document of documents.items) await api("POST", `/api/v1/documents/${document.id}/index`);
  for (const query of ["refund policy", "quarterly revenue", "shipping times"]) await api("POST", "/api/v1/documents/search", { query });
}

async function stop(server: ChildProcess): Promise<void> {
  server.kill("SIGTERM");
  await new Promise((resolve) => server.once("exit", resolve));
}

async function run(name: string, env: Record<string, string>): Promise<number[]> {
  console.log(`${name}`);
  const first = await startServer(env);
  const { dataDir } = first;
  let { server, base } = first;
  try {
    await sleep(SETTLE_MS);
    const idle = print("idle after the first boot (migrations, demo data)", measure(server.pid ?? 0));
    const bearer = token(dataDir, env);
    await exercise(base, bearer);
    const used = print("after dashboard use, indexing and search", measure(server.pid ?? 0));
    await sleep(SETTLE_MS);
    const rested = print(`idle again (analytics engines stop after ${ANALYTICS_IDLE_MS / 1000} s in this run)`, measure(server.pid ?? 0));
    await stop(server);
    ({ server, base } = await startServer(env, dataDir));
    await sleep(SETTLE_MS);
    const restarted = print("idle after a restart on the same data", measure(server.pid ?? 0));
    return [idle, used, rested, restarted];
  } finally {
    await stop(server);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export default async function bench(): Promise<void> {
  if (!fs.existsSync(".next/BUILD_ID")) throw new Error("no build: run npm run build first");
  const [idle, used, rested, restarted] = await run("embedded default (PGlite engines)", {});
  console.log(`  aims: idle after boot ${idle.toFixed(0)} MB (<= 700), just after use ${used.toFixed(0)} MB (<= 1024); idle after use ${rested.toFixed(0)} MB, after a restart ${restarted.toFixed(0)} MB`);
  if (process.env.QUARRY_TEST_DATABASE_URL) {
    const [pgIdle, pgUsed] = await run("baseline: the same server on PostgreSQL (Node only)", { DATABASE_URL: process.env.QUARRY_TEST_DATABASE_URL });
    console.log(`  embedded / PostgreSQL-mode Node: idle x${(idle / pgIdle).toFixed(2)}, after use x${(used / pgUsed).toFixed(2)}`);
  }
}
