import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { supervise } from "./supervise.mjs";

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

async function until(predicate: () => boolean, what: string, limitMs = 60_000) {
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
