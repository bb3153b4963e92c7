// Fault (issue 26 §6): the server is killed with SIGKILL in the middle of writes (uploads, indexing,
// publishing), round after round, and each time started again on the same data folder at once. Every write
// the server acknowledged must be there afterwards, and the folder must start every time: the lock
// (lib/db/data-dir-lock.mjs) keeps the new server out until the killed one's engine has exited, and
// PostgreSQL's crash recovery replays what was committed. Two servers started together on the folder:
// one comes up, the other refuses, naming the first.
//
// Rounds (test/faults/rounds.ts): `npm test` kills 3 times (both kinds of kill point, an index just finished and
// writes mid-flight, are walked); `npm run soak` kills 10 times, for the rare timing a few rounds miss.
//
// The server is test/replica.ts (the real start-up and route handlers; only Next's router replaced), run
// with tsx as a loader in the process itself, so SIGKILL reaches the process that holds the engine.
import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lockDataDir, probeDataDirLock } from "@/lib/db/data-dir-lock.mjs";
import { tokenFor } from "@/test/helpers";
import { measurePace, paced } from "@/test/machine-pace";
import { faultRounds } from "./rounds";

const KILLS = faultRounds(3, 10);
/**
 * Bounds stretch with the machine's load, measured as the test starts (test/machine-pace.ts): ten kill-and-restart
 * rounds did not fit a fixed 300 s at load 8.
 */
const PACE = measurePace();
/** A start on the killed server's folder: its engine's exit, crash recovery, the migrations' check (90 s on a quiet machine, with room). */
const START_MS = paced(90_000, PACE);

interface Server {
  child: ChildProcess;
  port: number;
  output: () => string;
}

const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** Starts a server on the test's data folder; resolves once it serves, rejects with its output if it exits first. */
function startServer(): Promise<Server> {
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=react-server", "test/replica.ts"], {
    cwd: process.cwd(),
    // The test's copy of the seeded database; the demo content is already there.
    env: { ...process.env, QUARRY_LOG_LEVEL: "warn", QUARRY_SEED_DEMO: "false" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no READY in ${Math.round(START_MS / 1000)} s:\n${output}`)), START_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /READY (\d+)/.exec(output);
      if (ready) {
        clearTimeout(timer);
        resolve({ child, port: Number(ready[1]), output: () => output });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`server exited (${code ?? signal}) before it was ready:\n${output}`), { output }));
    });
  });
}

const kill = (server: Server) =>
  new Promise<void>((resolve) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve();
    server.child.once("exit", () => resolve());
    server.child.kill("SIGKILL");
  });

interface CallOptions {
  token: string;
  url?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  params?: Record<string, string>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary response shapes
async function call(server: Server, module: string, method: string, options: CallOptions): Promise<{ status: number; json: any }> {
  const res = await fetch(`http://127.0.0.1:${server.port}/call`, { method: "POST", body: JSON.stringify({ module, method, ...options }) });
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

/** What the killed servers acknowledged (a 2xx answer received before the kill). */
const acked = {
  documents: new Map<string, { checksum?: string; indexed?: boolean }>(),
  dashboards: new Map<string, { version?: number }>(),
};

/** Upload → index, and create → publish, in loops, until the server dies under them. */
type Ack = "create" | "upload" | "index" | "dashboard" | "publish";

function writeUntilKilled(server: Server, token: string, round: number, onAck: (kind: Ack) => void): { stop: () => void; done: Promise<void> } {
  let stopped = false;
  let n = 0;
  // Publishing and indexing are rate limited per user (30 a minute): a refused write is not acknowledged; wait a little.
  const pause = () => new Promise((resolve) => setTimeout(resolve, 1_000));
  const documents = async () => {
    while (!stopped) {
      const name = `kill-${round}-${n++}`;
      const created = await call(server, "app/api/v1/documents", "POST", { token, body: { filename: `${name}.txt` } });
      if (created.status !== 201) throw new Error(`create answered ${created.status}: ${JSON.stringify(created.json)}`);
      const id = created.json.id as string;
      acked.documents.set(id, {});
      onAck("create");
      const text = `${name}: ${"Pallets of zinc leave Rotterdam on Tuesdays; copper cathodes leave Antwerp on Fridays. ".repeat(40 + (n % 7) * 20)}`;
      // Not indexed on upload (?index=false): the index request below is its own acknowledged write.
      const upload = await call(server, "app/api/v1/documents/[id]/upload", "POST", { token, url: `/api/v1/documents/${id}/upload?index=false`, params: { id }, rawBody: text, headers: { "content-type": "text/plain" } });
      if (upload.status === 429) continue;
      if (upload.status !== 200) throw new Error(`upload answered ${upload.status}: ${JSON.stringify(upload.json)}`);
      acked.documents.set(id, { checksum: upload.json.checksum_sha256 });
      onAck("upload");
      const indexed = await call(server, "app/api/v1/documents/[id]/index", "POST", { token, params: { id } });
      if (indexed.status === 429) {
        await pause();
        continue;
      }
      if (indexed.status !== 200) throw new Error(`index answered ${indexed.status}: ${JSON.stringify(indexed.json)}`);
      acked.documents.set(id, { checksum: upload.json.checksum_sha256, indexed: true });
      onAck("index");
    }
  };
  const dashboards = async () => {
    while (!stopped) {
      const slug = `kill-${round}-${n++}`;
      const created = await call(server, "app/api/v1/custom-dashboards", "POST", { token, body: { name: slug, slug, spec_yaml: dashboardYaml(slug) } });
      if (created.status !== 201) throw new Error(`dashboard create answered ${created.status}: ${JSON.stringify(created.json)}`);
      const id = created.json.id as string;
      acked.dashboards.set(id, {});
      onAck("dashboard");
      const published = await call(server, "app/api/v1/custom-dashboards/[id]/publish", "POST", { token, params: { id } });
      if (published.status === 429) {
        await pause();
        continue;
      }
      if (published.status !== 200) throw new Error(`publish answered ${published.status}: ${JSON.stringify(published.json)}`);
      acked.dashboards.set(id, { version: published.json.published_version ?? published.json.version });
      onAck("publish");
    }
  };
  // A request cut by the kill fails (connection reset): its write was not acknowledged, so nothing is expected of it.
  const loops = [documents(), documents(), dashboards()].map((p) => p.catch((error: unknown) => (stopped ? undefined : Promise.reject(error))));
  return { stop: () => (stopped = true), done: Promise.all(loops).then(() => undefined) };
}

/** The SHA-256 of every stored object file (local storage under QUARRY_DATA_DIR/objects). */
function storedChecksums(): Set<string> {
  const sums = new Set<string>();
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.isFile()) sums.add(crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex"));
    }
  };
  walk(path.join(process.env.QUARRY_DATA_DIR!, "objects"));
  return sums;
}

async function expectEveryAcknowledgedWrite(server: Server, token: string) {
  const stored = storedChecksums();
  for (const [id, expected] of acked.documents) {
    const res = await call(server, "app/api/v1/documents/[id]", "GET", { token, params: { id } });
    expect(res.status, `document ${id}`).toBe(200);
    if (expected.checksum) {
      expect(res.json.checksum_sha256, `document ${id}`).toBe(expected.checksum);
      expect(stored.has(expected.checksum), `stored bytes of document ${id}`).toBe(true);
    }
    if (expected.indexed) {
      expect(res.json.status, `document ${id}`).toBe("indexed");
      expect(res.json.chunk_count, `document ${id}`).toBeGreaterThan(0);
    }
  }
  for (const [id, expected] of acked.dashboards) {
    const res = await call(server, "app/api/v1/custom-dashboards/[id]", "GET", { token, params: { id } });
    expect(res.status, `dashboard ${id}`).toBe(200);
    if (expected.version !== undefined) expect(res.json.published_version, `dashboard ${id}`).toBe(expected.version);
  }
}

// The data folder's lock guards the embedded engine; on a PostgreSQL server the folder holds no database (replicas share it).
describe.skipIf(process.env.QUARRY_TEST_ENGINE === "postgres")("fault: the server killed (SIGKILL) in the middle of writes", () => {
  it(`keeps every acknowledged write over ${KILLS} kills and restarts on the same data folder`, { timeout: paced(60_000 + 24_000 * KILLS, PACE) }, async () => {
    const token = await tokenFor("acme", "admin");

    // Two servers started together on one folder: one serves, the other refuses and names it.
    const [a, b] = await Promise.allSettled([startServer(), startServer()]);
    const up = [a, b].filter((r): r is PromiseFulfilledResult<Server> => r.status === "fulfilled");
    const refused = [a, b].filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(up).toHaveLength(1);
    expect(refused).toHaveLength(1);
    let server = up[0].value;
    expect(String(refused[0].reason)).toMatch(new RegExp(`is in use by another Quarry process \\(pid ${server.child.pid}, `));

    const restartMs: number[] = [];
    /** Who held the folder right after each kill: the killed server's engine, while it shuts down. */
    const afterKill: string[] = [];
    /** How long a lock taken right after each kill waited for the killed server's engine. */
    const waitedMs: number[] = [];
    for (let round = 0; round < KILLS; round++) {
      let acks = 0;
      // Kill at a random moment with requests in flight: in even rounds just after an index finished
      // (uploads and publishes under way), in odd ones after a few acknowledged writes (often mid-index).
      const killAfter = 3 + Math.floor(Math.random() * 6);
      let killed!: () => void;
      const enough = new Promise<void>((resolve) => (killed = resolve));
      const writing = writeUntilKilled(server, token, round, (kind) => {
        acks += 1;
        if (round % 2 === 0 ? kind === "index" : acks >= killAfter) killed();
      });
      await Promise.race([enough, writing.done]);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 300));
      writing.stop();
      const killedPid = server.child.pid;
      await kill(server);
      await writing.done;

      // The server is gone; its engine may still be shutting down, and holds the folder's lock until it
      // has exited. Whoever holds it right now must be that engine: it answers for its server (or is
      // too busy inside a statement to answer at all), and nothing else may.
      const held = await probeDataDirLock(process.env.QUARRY_DATA_DIR!);
      afterKill.push(held.state !== "alive" ? "free" : !held.holder ? "busy engine" : held.holder.pid === killedPid && held.holder.enginePid ? "engine" : `other ${JSON.stringify(held.holder)}`);
      // A start right now waits for that engine rather than opening the files beside it.
      const waitedFrom = performance.now();
      (await lockDataDir(process.env.QUARRY_DATA_DIR!, { processName: "fault test" })).release();
      waitedMs.push(Math.round(performance.now() - waitedFrom));

      const restarting = performance.now();
      server = await startServer();
      restartMs.push(Math.round(performance.now() - restarting));
      await expectEveryAcknowledgedWrite(server, token);
    }
    // Writes still work on the folder after the last recovery.
    writeUntilKilled(server, token, KILLS, () => undefined).stop();
    const last = await call(server, "app/api/v1/custom-dashboards", "POST", { token, body: { name: "after", slug: "after-kills", spec_yaml: dashboardYaml("after-kills") } });
    expect(last.status).toBe(201);
    await kill(server);

    const indexed = [...acked.documents.values()].filter((d) => d.indexed).length;
    const published = [...acked.dashboards.values()].filter((d) => d.version !== undefined).length;
    console.log(`pace ${PACE.toFixed(2)}; ${KILLS} kills: ${acked.documents.size} documents (${indexed} indexed), ${acked.dashboards.size} dashboards (${published} published) acknowledged; restarts ${restartMs.join(", ")} ms; lock after each kill: ${afterKill.join(", ")} (a new lock waited ${waitedMs.join(", ")} ms)`);
    // Nothing but the killed server's own engine ever held the folder after a kill, and it did hold it.
    expect(afterKill.every((state) => ["engine", "busy engine", "free"].includes(state)), afterKill.join("; ")).toBe(true);
    expect(afterKill.filter((state) => state !== "free").length).toBeGreaterThan(0);
    expect(indexed).toBeGreaterThan(0);
    expect(published).toBeGreaterThan(0);
  });
});
