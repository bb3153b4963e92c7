import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DataDirLocked, LOCK_FILE, lockDataDir, probeDataDirLock } from "@/lib/db/data-dir-lock.mjs";

// Issue 26 §6: one process per data folder. Two servers on one QUARRY_DATA_DIR both came up and both
// wrote, and the folder no longer started; a server on a taken port booted its engine before failing.

const folders: string[] = [];
const children: ChildProcess[] = [];
const tempFolder = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-lock-"));
  folders.push(dir);
  return dir;
};

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true });
});

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the output once it contains `pattern`. */
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<string>;
}

function run(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, args, { cwd: process.cwd(), env: { ...process.env, QUARRY_LOG_LEVEL: "warn", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let output = "";
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const waitFor = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        if (pattern.test(output)) {
          listeners.delete(check);
          clearTimeout(timer);
          resolve(output);
        }
      };
      const timer = setTimeout(() => reject(new Error(`no ${pattern} in ${timeoutMs} ms:\n${output}`)), timeoutMs);
      listeners.add(check);
      void exited.then(() => setTimeout(() => (listeners.has(check) ? reject(new Error(`exited before ${pattern}:\n${output}`)) : undefined), 50));
      check();
    });
  return { child, output: () => output, exited, waitFor };
}

/** A plain Node process that takes the lock of `dir` and holds it until killed. */
function holder(dir: string, waitMs = 0): Run {
  const script = `import(${JSON.stringify(path.resolve("lib/db/data-dir-lock.mjs"))}).then((m) => m.lockDataDir(${JSON.stringify(dir)}, { processName: "test holder", waitMs: ${waitMs} })).then(
    () => { console.log("HELD"); setInterval(() => undefined, 1000); },
    (error) => { console.log(error.name === "DataDirLocked" ? "LOCKED " + error.message : "FAILED " + error.message); process.exit(3); })`;
  return run(["--input-type=module", "-e", script]);
}

describe("the data folder lock", () => {
  it("refuses a second holder with the first one's pid, and is released when the holder is killed (SIGKILL)", async () => {
    const dir = tempFolder();
    const first = holder(dir);
    await first.waitFor(/HELD/);
    const refused = await lockDataDir(dir).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(DataDirLocked);
    expect((refused as DataDirLocked).holder).toMatchObject({ pid: first.child.pid, process: "test holder" });
    expect((refused as DataDirLocked).message).toMatch(new RegExp(`^QUARRY_DATA_DIR .+ is in use by another Quarry process \\(pid ${first.child.pid}, test holder, since `));

    first.child.kill("SIGKILL");
    await first.exited;
    // The socket file stays behind; nothing answers on it.
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(true);
    expect((await probeDataDirLock(dir)).state).toBe("stale");
    const lock = await lockDataDir(dir);
    expect((await probeDataDirLock(dir)).state).toBe("alive");
    // Taken again within the process: one more reference, not a second socket.
    const again = await lockDataDir(dir);
    again.release();
    expect((await probeDataDirLock(dir)).state).toBe("alive");
    lock.release();
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
  });

  it("lets exactly one of six starters racing for a stale lock take it", async () => {
    const dir = tempFolder();
    const dead = holder(dir);
    await dead.waitFor(/HELD/);
    dead.child.kill("SIGKILL");
    await dead.exited;
    const racers = Array.from({ length: 6 }, () => holder(dir));
    const outcomes = await Promise.all(racers.map((r) => r.waitFor(/HELD|LOCKED|FAILED/)));
    expect(outcomes.filter((o) => o.includes("HELD"))).toHaveLength(1);
    expect(outcomes.filter((o) => o.includes("LOCKED"))).toHaveLength(5);
    const winner = racers.find((r) => r.output().includes("HELD"))!;
    for (const loser of racers.filter((r) => r !== winner)) expect(loser.output()).toContain(`pid ${winner.child.pid}`);
  });

  it("reaches a folder whose path is too long for a socket address", async () => {
    const dir = path.join(tempFolder(), "x".repeat(60), "y".repeat(60));
    const first = holder(dir);
    await first.waitFor(/HELD/);
    await expect(lockDataDir(dir)).rejects.toThrow(`pid ${first.child.pid}`);
    first.child.kill("SIGKILL");
    await first.exited;
    (await lockDataDir(dir)).release();
  });
});

describe("scripts/server.mjs start order", () => {
  it("exits before booting when its port is taken: no engine, no data folder written", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    const port = (taken.address() as net.AddressInfo).port;
    const dir = path.join(tempFolder(), "data");
    const server = run(["scripts/server.mjs"], { PORT: String(port), QUARRY_DATA_DIR: dir, DATABASE_URL: "" });
    const { code } = await server.exited;
    taken.close();
    expect(code).toBe(1);
    // The holder named (scripts/port-holder.mjs): this test's own process listens there.
    expect(server.output()).toMatch(new RegExp(`Quarry cannot listen on port ${port}: pid ${process.pid} \\(.+\\) is using it\\. Nothing was started\\.`));
    expect(fs.existsSync(dir)).toBe(false);
  });

  it("exits before booting when another process holds its data folder, naming that process", async () => {
    const dir = tempFolder();
    const first = holder(dir);
    await first.waitFor(/HELD/);
    const server = run(["scripts/server.mjs"], { PORT: "0", QUARRY_DATA_DIR: dir, DATABASE_URL: "" });
    const { code } = await server.exited;
    expect(code).toBe(1);
    expect(server.output()).toMatch(new RegExp(`QUARRY_DATA_DIR .+ is in use by another Quarry process \\(pid ${first.child.pid}, test holder`));
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE]);
  });

  it("npm run db:seed and npm run worker refuse a held data folder, naming the holder", async () => {
    const dir = tempFolder();
    const first = holder(dir);
    await first.waitFor(/HELD/);
    const env = { QUARRY_DATA_DIR: dir, DATABASE_URL: "" };
    const seed = run(["--import", "tsx", "--conditions=react-server", "scripts/db-seed.ts"], env);
    const worker = run(["--import", "tsx", "--conditions=react-server", "scripts/worker.ts", "--once"], env);
    for (const script of [seed, worker]) {
      const { code } = await script.exited;
      expect(code).not.toBe(0);
      expect(script.output()).toContain(`is in use by another Quarry process (pid ${first.child.pid}, test holder`);
    }
    expect(fs.readdirSync(dir).sort()).toEqual([LOCK_FILE]);
  }, 60_000);
});
