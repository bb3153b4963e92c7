import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { npmAncestors, supervise } from "./supervise.mjs";
import { measurePace, paced } from "@/test/machine-pace";
import { processAlive as alive } from "@/test/support/process-alive";

/*
 * The supervisor npm start runs the server under (issue 41 §5): real child processes that die the ways a
 * server dies — an abort as a native panic ends it, an exit — restarted when they had been serving, not
 * when they fail to start, and stopped with the supervisor.
 */

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-supervise-"));
afterEach(() => {
  for (const name of fs.readdirSync(dir)) fs.rmSync(path.join(dir, name), { force: true });
});

/** A child that counts its starts in a file, serves for `serveMs`, then ends the way `death` says. */
function childScript(death: "abort" | "exit-1" | "serve", serveMs: number): string[] {
  const starts = path.join(dir, "starts");
  const body = `require("fs").appendFileSync(${JSON.stringify(starts)}, "x");
setTimeout(() => { ${death === "abort" ? "process.abort()" : death === "exit-1" ? "process.exit(1)" : ""} }, ${serveMs});
${death === "serve" ? "setInterval(() => {}, 1000);" : ""}`;
  return ["-e", body];
}

const startsSoFar = () => (fs.existsSync(path.join(dir, "starts")) ? fs.readFileSync(path.join(dir, "starts"), "utf8").length : 0);

/** How slow this machine is now (test/machine-pace.ts): every bound below is its quiet-machine figure times it. */
const pace = measurePace();

async function until(predicate: () => boolean, what: string, limitMs = paced(60_000, pace)) {
  const deadline = Date.now() + limitMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("supervise", () => {
  it("starts a server again after it aborts while serving, and again, then gives up in a crash loop", async () => {
    const lines: string[] = [];
    let exited: number | undefined;
    supervise({ command: process.execPath, args: childScript("abort", 300), startupMs: 100, maxRestarts: 2, windowMs: 60_000, log: (l) => lines.push(l), onExit: (code) => (exited = code) });
    await until(() => exited !== undefined, "the supervisor to give up");
    // Started, restarted twice (1 s, then 2 s later), and the third death within the window ends it.
    expect(startsSoFar()).toBe(3);
    expect(exited).not.toBe(0);
    expect(lines.filter((l) => /was killed by SIGABRT after \d+ s; restarting it in/.test(l))).toHaveLength(2);
    expect(lines.at(-1)).toMatch(/3 deaths within 60 s, so it is not restarted again/);
  });

  it("does not restart a server that fails to start: its exit code is the supervisor's", async () => {
    let exited: number | undefined;
    supervise({ command: process.execPath, args: childScript("exit-1", 0), startupMs: 10_000, log: () => undefined, onExit: (code) => (exited = code) });
    await until(() => exited !== undefined, "the failed start");
    expect(exited).toBe(1);
    expect(startsSoFar()).toBe(1);
  });

  it("stops the server it runs and exits with it, without restarting", async () => {
    let exited: number | undefined;
    const supervisor = supervise({ command: process.execPath, args: childScript("serve", 0), startupMs: 0, log: () => undefined, onExit: (code) => (exited = code) });
    await until(() => startsSoFar() === 1, "the server to start");
    supervisor.stop("SIGTERM");
    await until(() => exited !== undefined, "the stop");
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(startsSoFar()).toBe(1);
    expect(supervisor.restarts()).toBe(0);
  });
});


/** A script file in the test's folder. */
function script(name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, body);
  return file;
}

const SUPERVISE = JSON.stringify(path.resolve("scripts/supervise.mjs"));

describe("supervise: the process tree stops as one (issue 47)", () => {
  it("waits for the child's own children to close after a stop, as the server waits for its engines", async () => {
    // The grandchild is an engine's stand-in: its parent's exit closes its channel, and it takes a moment to close.
    const closed = path.join(dir, "closed");
    const engine = script("engine.cjs", `process.on("disconnect", () => setTimeout(() => { require("fs").writeFileSync(${JSON.stringify(closed)}, "closed"); process.exit(0); }, 400)); setInterval(() => {}, 1000);`);
    const server = script("server.cjs", `require("child_process").fork(${JSON.stringify(engine)}); require("fs").appendFileSync(${JSON.stringify(path.join(dir, "starts"))}, "x"); setInterval(() => {}, 1000);`);
    let exited: number | undefined;
    let closedWhenExited = false;
    const supervisor = supervise({ command: process.execPath, args: [server], startupMs: 0, log: () => undefined, onExit: (code) => ((exited = code), (closedWhenExited = fs.existsSync(closed))) });
    await until(() => startsSoFar() === 1, "the server to start");
    await new Promise((resolve) => setTimeout(resolve, 300));
    supervisor.stop("SIGTERM");
    await until(() => exited !== undefined, "the stop");
    expect(exited).toBe(0);
    expect(closedWhenExited).toBe(true);
  });

  it("kills what is left of the tree with SIGKILL after the grace: a child that ignores SIGTERM and its child", async () => {
    const pids = path.join(dir, "pids");
    const stubborn = `process.on("SIGTERM", () => undefined); process.on("disconnect", () => undefined); setInterval(() => {}, 1000);`;
    const engine = script("stubborn-engine.cjs", stubborn);
    const server = script("stubborn-server.cjs", `const e = require("child_process").fork(${JSON.stringify(engine)}); require("fs").writeFileSync(${JSON.stringify(pids)}, process.pid + " " + e.pid); ${stubborn}`);
    let exited: number | undefined;
    const lines: string[] = [];
    const supervisor = supervise({ command: process.execPath, args: [server], startupMs: 0, stopGraceMs: 500, log: (l) => lines.push(l), onExit: (code) => (exited = code) });
    await until(() => fs.existsSync(pids) && fs.readFileSync(pids, "utf8").includes(" "), "the server and its engine to start");
    const [serverPid, enginePid] = fs.readFileSync(pids, "utf8").split(" ").map(Number);
    supervisor.stop("SIGTERM");
    await until(() => exited !== undefined, "the stop");
    expect(alive(serverPid)).toBe(false);
    // The engine was re-parented when its server died; whoever adopted it reaps it a moment later.
    await until(() => !alive(enginePid), "the engine to be gone", paced(5_000, pace));
    expect(lines.join("\n")).toMatch(/did not end within \d+ s of being asked to: killing what is left \(SIGKILL\)/);
  });

  it("a supervised child stops by itself when its supervisor is killed with SIGKILL", async () => {
    const stopped = path.join(dir, "stopped");
    const server = script(
      "orphan-server.mjs",
      `import { onStopRequest } from ${SUPERVISE};
      import fs from "node:fs";
      onStopRequest((reason) => { fs.writeFileSync(${JSON.stringify(stopped)}, reason); process.exit(0); });
      fs.writeFileSync(${JSON.stringify(path.join(dir, "server-pid"))}, String(process.pid));
      setInterval(() => {}, 1000);`,
    );
    const supervisorScript = script("supervisor.mjs", `import { supervise } from ${SUPERVISE}; supervise({ command: process.execPath, args: [${JSON.stringify(server)}], startupMs: 0 });`);
    const { spawn } = await import("node:child_process");
    const supervisorProcess = spawn(process.execPath, [supervisorScript], { stdio: "ignore" });
    const serverPidFile = path.join(dir, "server-pid");
    await until(() => fs.existsSync(serverPidFile) && fs.readFileSync(serverPidFile, "utf8") !== "", "the server to start");
    const serverPid = Number(fs.readFileSync(serverPidFile, "utf8"));
    supervisorProcess.kill("SIGKILL");
    await until(() => fs.existsSync(stopped), "the orphaned server to stop");
    expect(fs.readFileSync(stopped, "utf8")).toBe("its supervisor is gone");
    await until(() => !alive(serverPid), "the orphaned server to be gone", paced(5_000, pace));
  });

  it("under npm, stops when npm ends on SIGTERM or SIGHUP, which npm does not pass on", async () => {
    const { spawn } = await import("node:child_process");
    const project = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-npm-"));
    try {
      fs.writeFileSync(
        path.join(project, "app.mjs"),
        `import { npmAncestors, onStopRequest } from ${SUPERVISE};
        import fs from "node:fs";
        const watch = npmAncestors();
        onStopRequest((reason) => { fs.writeFileSync("stopped", reason); process.exit(0); }, { watch });
        fs.writeFileSync("watching", watch.join(" "));
        setInterval(() => {}, 1000);`,
      );
      fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "npm-parent", private: true, scripts: { start: "node app.mjs" } }));
      for (const signal of ["SIGTERM", "SIGHUP"] as const) {
        for (const name of ["stopped", "watching"]) fs.rmSync(path.join(project, name), { force: true });
        const npm = spawn("npm", ["start"], { cwd: project, stdio: "ignore", detached: true });
        await until(() => fs.existsSync(path.join(project, "watching")), "the script to start under npm");
        // npm itself is among what the script watches.
        expect(fs.readFileSync(path.join(project, "watching"), "utf8").split(" ").map(Number)).toContain(npm.pid);
        npm.kill(signal);
        await until(() => fs.existsSync(path.join(project, "stopped")), `the script to stop after ${signal} to npm`);
        expect(fs.readFileSync(path.join(project, "stopped"), "utf8")).toBe("the process that started it is gone");
      }
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  });

  it("outside npm watches no ancestor (a nohup'd start outlives its shell)", () => {
    expect(npmAncestors({})).toEqual([]);
  });
});
