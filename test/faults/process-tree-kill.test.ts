// Fault (issue 47 §1): every process of Quarry's tree — the supervisor, the server, each engine — killed with SIGKILL
// in turn while writes run. Nothing may be orphaned (every process of the tree is the current tree's, or gone, within
// a bound), nothing may keep the data folder, the next start succeeds, and every write the server acknowledged is
// there after each recovery. Then SIGTERM to the supervisor ends the whole tree within its grace.
//
// The tree is scripts/supervise.mjs over test/replica.ts (process-tree-supervisor.mjs, process-tree-server.ts): the
// real supervisor, start-up, engines and route handlers, without the production build scripts/server.mjs needs.
// Bounds are derived from this machine: the first start's from its load (test/machine-pace.ts), the others from how
// long that first start took and the supervisor's own grace.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { probeDataDirLock } from "@/lib/db/data-dir-lock.mjs";
import { STOP_GRACE_MS } from "@/scripts/supervise.mjs";
import { tokenFor } from "@/test/helpers";
import { measurePace, paced } from "@/test/machine-pace";

const embedded = process.env.QUARRY_TEST_ENGINE !== "postgres";
/** The machine's load as the test starts (test/machine-pace.ts): the first start's bound stretches with it. */
const PACE = measurePace();

interface Tree {
  supervisor: ChildProcess;
  output: () => string;
  /** How many servers of this tree have printed READY. */
  readyCount: () => number;
  /** The port of the latest server to print READY. */
  port: () => number;
  /** Resolves once more than `count` servers have printed READY. */
  ready: (count: number, limitMs: number) => Promise<void>;
}

const supervisors: ChildProcess[] = [];
/** Every pid ever seen in a tree: at the end, each is gone. */
const seen = new Set<number>();
afterAll(() => {
  for (const pid of seen) if (alive(pid)) process.kill(pid, "SIGKILL");
  for (const child of supervisors) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie has ended once its last thread has (an exiting main thread shows "Z" while the others still hold the
  // process's descriptors); it waits only for whoever adopted it to reap it.
  if (!/^\d+ \(.*\) Z /.test(readProc(`/proc/${pid}/stat`))) return true;
  try {
    return fs.readdirSync(`/proc/${pid}/task`).length > 1;
  } catch {
    return false;
  }
}

function readProc(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** The descendants of `root` (itself included), from /proc: pid → command line. */
function treeOf(root: number): Map<number, string> {
  const parentOf = new Map<number, number>();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProc(`/proc/${name}/stat`);
    const close = stat.lastIndexOf(")");
    if (close > 0) parentOf.set(Number(name), Number(stat.slice(close + 2).split(" ")[1]));
  }
  const tree = new Map<number, string>();
  const visit = (pid: number) => {
    tree.set(pid, readProc(`/proc/${pid}/cmdline`).split("\0").join(" ").trim());
    for (const [child, parent] of parentOf) if (parent === pid && !tree.has(child)) visit(child);
  };
  if (alive(root)) visit(root);
  for (const pid of tree.keys()) seen.add(pid);
  return tree;
}

const isEngine = (command: string) => command.includes("engine-process.mjs");
const isServer = (command: string) => command.includes("process-tree-server.ts");

function startTree(): Tree {
  const supervisor = spawn(process.execPath, ["test/faults/process-tree-supervisor.mjs"], {
    cwd: process.cwd(),
    // The test's copy of the seeded database; an analytics engine beside the primary, so the tree has each kind.
    env: { ...process.env, QUARRY_LOG_LEVEL: "warn", QUARRY_SEED_DEMO: "false", QUARRY_EMBEDDED_ANALYTICS: "true" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  supervisors.push(supervisor);
  // Sampled all along, so that a short-lived process (an engine started as its server died) is seen too.
  const sampling = setInterval(() => treeOf(supervisor.pid!), 200);
  supervisor.once("exit", () => clearInterval(sampling));
  let output = "";
  supervisor.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  supervisor.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const readyLines = () => [...output.matchAll(/READY (\d+)/g)];
  const ready = async (count: number, limitMs: number) => {
    const deadline = performance.now() + limitMs;
    for (;;) {
      if (readyLines().length > count) return;
      if (supervisor.exitCode !== null || supervisor.signalCode !== null) throw new Error(`the supervisor exited (${supervisor.exitCode ?? supervisor.signalCode}):\n${output}`);
      if (performance.now() > deadline) throw new Error(`no READY in ${Math.round(limitMs)} ms:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return { supervisor, output: () => output, readyCount: () => readyLines().length, port: () => Number(readyLines().at(-1)?.[1]), ready };
}

async function until(predicate: () => boolean, what: string, limitMs: number) {
  const deadline = performance.now() + limitMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`not within ${Math.round(limitMs)} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary response shapes
async function call(tree: Tree, module: string, method: string, options: { token: string; body?: unknown; params?: Record<string, string> }): Promise<{ status: number; json: any }> {
  const res = await fetch(`http://127.0.0.1:${tree.port()}/call`, { method: "POST", body: JSON.stringify({ module, method, ...options }) });
  const text = await res.text();
  try {
    return { status: res.status, json: JSON.parse(text) };
  } catch {
    return { status: res.status, json: text };
  }
}

const dashboardYaml = (slug: string) => `version: "1.0"
kind: dashboard
metadata: { id: ${slug}, name: ${slug} }
spec:
  tabs: [{ id: main, name: Main, widgets: [note] }]
---
version: "1.0"
kind: widget
metadata: { id: note, name: Note }
spec:
  component: text
  layout: { x: 0, y: 0, w: 6, h: 2 }
  display: { text: { content: "${slug}" } }
`;

describe("fault: each process of the tree killed (SIGKILL) in turn", () => {
  it("orphans nothing, starts again, and keeps every acknowledged write", { timeout: paced(900_000, PACE) }, async () => {
    const token = await tokenFor("acme", "admin");
    let tree = startTree();
    const startedAt = performance.now();
    await tree.ready(0, paced(90_000, PACE));
    // The machine's pace, measured now: what one start of the tree took. A restart may take a few of those; processes
    // left alone must end within the supervisor's grace (which bounds the engines' own) plus one of those.
    const startMs = performance.now() - startedAt;
    const readyLimitMs = 4 * startMs;
    const goneLimitMs = STOP_GRACE_MS + startMs;

    // The sample dashboard, whose widget queries start an analytics engine (embedded).
    const seeded = await call(tree, "app/api/v1/custom-dashboards/%5Fseed", "POST", { token });
    expect(seeded.status, JSON.stringify(seeded.json)).toBeLessThan(300);
    const sample = seeded.json as { id: string };

    // Writes all along; a write cut by a kill was not acknowledged. A pause between them keeps under the rate limit.
    const acked = new Set<string>();
    let writing = true;
    let n = 0;
    const writes = (async () => {
      while (writing) {
        const slug = `tree-${n++}`;
        const res = await call(tree, "app/api/v1/custom-dashboards", "POST", { token, body: { name: slug, slug, spec_yaml: dashboardYaml(slug) } }).catch(() => undefined);
        if (res?.status === 201) acked.add(res.json.id as string);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const ackedSoFar = () => acked.size;
    const someWritesOn = async (what: string) => {
      const before = ackedSoFar();
      await until(() => ackedSoFar() >= before + 2, `writes acknowledged ${what}`, readyLimitMs);
    };
    const everyAckedWritePresent = async () => {
      for (const id of [...acked]) {
        const res = await call(tree, "app/api/v1/custom-dashboards/[id]", "GET", { token, params: { id } });
        expect(res.status, `dashboard ${id}`).toBe(200);
      }
    };
    /** Every process ever seen is in the current tree or gone, within the bound. */
    const nothingOrphaned = async (what: string) => {
      const current = tree.supervisor.exitCode === null && tree.supervisor.signalCode === null ? treeOf(tree.supervisor.pid!) : new Map<number, string>();
      await until(() => [...seen].every((pid) => current.has(pid) || !alive(pid)), `every process outside the tree gone ${what}`, goneLimitMs);
    };
    /** No process holds the data folder's lock (an engine started just before its server died may take its grace to go). */
    const folderFree = async (what: string) => {
      const deadline = performance.now() + goneLimitMs;
      while ((await probeDataDirLock(process.env.QUARRY_DATA_DIR!)).state === "alive") {
        if (performance.now() > deadline) throw new Error(`the data folder still held ${Math.round(goneLimitMs)} ms ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const log: string[] = [];

    await someWritesOn("at the start");
    expect((await call(tree, "app/api/v1/custom-dashboards/[id]/query", "POST", { token, params: { id: sample.id }, body: {} })).status).toBe(200);
    const first = treeOf(tree.supervisor.pid!);
    const server = () => [...treeOf(tree.supervisor.pid!)].find(([, command]) => isServer(command))?.[0];
    const engines = () => [...treeOf(tree.supervisor.pid!)].filter(([, command]) => isEngine(command)).map(([pid]) => pid);
    if (embedded) expect(engines().length, [...first.values()].join("\n")).toBeGreaterThanOrEqual(2);

    // 1. Each engine: the same server goes on and starts another (a close sent to an engine killed while it started
    // once ended the whole server with an unheard ERR_IPC_CHANNEL_CLOSED).
    for (const engine of engines()) {
      if (!alive(engine)) continue; // an analytics engine the server stopped meanwhile
      const servedBefore = tree.readyCount();
      const serverBefore = server();
      process.kill(engine, "SIGKILL");
      await until(() => !alive(engine), "the killed engine reaped", goneLimitMs);
      // The analytics engine is started again on the next reader work (this one may fail while it restarts).
      await call(tree, "app/api/v1/custom-dashboards/[id]/query", "POST", { token, params: { id: sample.id }, body: {} }).catch(() => undefined);
      await someWritesOn(`after engine ${engine} was killed`);
      await nothingOrphaned(`after engine ${engine} was killed`);
      expect(tree.readyCount(), `the server restarted after engine ${engine} was killed:\n${tree.output()}`).toBe(servedBefore);
      expect(server()).toBe(serverBefore);
      log.push(`engine ${engine} killed: the same server, ${engines().length} engines now`);
    }

    // 2. The server: the supervisor starts another, once the dead one's engines have gone.
    const serverEngines = engines();
    const serverPid = server()!;
    const servedBefore = tree.readyCount();
    const killedAt = performance.now();
    process.kill(serverPid, "SIGKILL");
    await tree.ready(servedBefore, readyLimitMs);
    log.push(`server killed: a new one ready after ${Math.round(performance.now() - killedAt)} ms`);
    expect(serverEngines.every((pid) => !alive(pid))).toBe(true);
    await nothingOrphaned("after the server was killed");
    await someWritesOn("after the server was killed");
    await everyAckedWritePresent();

    // 3. The supervisor: the server stops by itself (its channel closed), its engines with it; nothing keeps the folder.
    const supervisorKilledAt = performance.now();
    tree.supervisor.kill("SIGKILL");
    await until(() => [...seen].every((pid) => !alive(pid)), "the orphaned server and engines gone", goneLimitMs);
    log.push(`supervisor killed: its processes gone after ${Math.round(performance.now() - supervisorKilledAt)} ms`);
    if (embedded) await folderFree("after the supervisor was killed");

    // The next start succeeds on the same folder, with every acknowledged write.
    tree = startTree();
    await tree.ready(0, readyLimitMs);
    await someWritesOn("after the restart");
    await everyAckedWritePresent();

    // 4. A stop: SIGTERM to the supervisor ends the whole tree within its grace, exit code 0.
    writing = false;
    await writes;
    const last = treeOf(tree.supervisor.pid!).size;
    const stoppedAt = performance.now();
    const exited = new Promise<number | null>((resolve) => tree.supervisor.once("exit", (code) => resolve(code)));
    tree.supervisor.kill("SIGTERM");
    expect(await exited).toBe(0);
    const stopMs = performance.now() - stoppedAt;
    // The supervisor exits once every process of the server's group has ended.
    expect([...seen].filter(alive), "processes left when the supervisor exited").toEqual([]);
    log.push(`SIGTERM: ${last} processes gone after ${Math.round(stopMs)} ms`);
    expect(stopMs).toBeLessThan(goneLimitMs);
    if (embedded) expect((await probeDataDirLock(process.env.QUARRY_DATA_DIR!)).state).not.toBe("alive");

    console.log(`pace ${PACE.toFixed(2)}; process tree (first start ${Math.round(startMs)} ms; bounds: ready ${Math.round(readyLimitMs)} ms, gone ${Math.round(goneLimitMs)} ms): ${log.join("; ")}; ${acked.size} writes acknowledged, all present`);
  });
});
