// Keeps one child process running (issue 41 §5), and stops its whole process tree as one (issue 47 §1).
//
// Restarts: a process that dies while serving (a native panic that aborts it, an out-of-memory kill,
// an unexpected exit) is started again, so one hostile request cannot leave the site down until
// someone notices. What is not restarted:
//   - a child that dies before it has run `startupMs` (a failed start: a port in use, an invalid
//     configuration, a locked data folder): its exit code is the supervisor's, as before;
//   - a child stopped on purpose (`stop()`, which start.mjs calls on SIGINT, SIGTERM and SIGHUP);
//   - a crash loop: past `maxRestarts` deaths within `windowMs` it gives up and exits non-zero.
// Restarts wait a growing pause (1 s, 2 s, 4 s … at most 30 s), reset after a child has served for
// `windowMs`.
//
// The tree: the child leads a process group of its own (its engines and draw processes are forked into
// it), so the supervisor can tell when every process of it has ended, and end what is left. A stop sends
// the signal to the child alone (the server closes; its engines close their databases when it has gone),
// waits until the group is empty, and after `stopGraceMs` kills whatever of it remains with SIGKILL.
// A child that dies by itself is waited for the same way before it is started again or the supervisor
// exits, so no engine of a dead server outlives it by more than the grace. The child also has an IPC
// channel to the supervisor: `onStopRequest` in the child sees it close when the supervisor dies (even
// by SIGKILL) and stops.
//
// Plain ESM: scripts/start.mjs runs it before anything is built or bundled.
import { spawn } from "node:child_process";
import fs from "node:fs";

/** How long a stopped tree may take to end before what remains of it is killed. The engines' own bounds fit within it:
 * a closing engine is killed by its server after 10 s (lib/db/embedded-engine.ts), an orphaned one kills itself 5 s
 * after its server is gone (lib/db/engine-process.mjs). */
export const STOP_GRACE_MS = 20_000;

/**
 * @param {{ command: string, args: string[], env?: NodeJS.ProcessEnv, startupMs?: number, maxRestarts?: number,
 *   windowMs?: number, stopGraceMs?: number, log?: (line: string) => void, onExit?: (code: number) => void }} options
 * @returns {{ stop: (signal?: NodeJS.Signals) => void, restarts: () => number, pid: () => number | undefined }}
 */
export function supervise(options) {
  const { command, args, env = process.env, startupMs = 30_000, maxRestarts = 5, windowMs = 600_000, stopGraceMs = STOP_GRACE_MS } = options;
  const log = options.log ?? ((line) => console.error(line));
  const onExit = options.onExit ?? ((code) => process.exit(code));
  let stopping = false;
  let child;
  let deaths = [];
  let restarts = 0;
  let exited = false;
  const exit = (code) => {
    if (exited) return;
    exited = true;
    onExit(code);
  };

  const start = () => {
    const startedAt = Date.now();
    child = spawn(command, args, { stdio: ["inherit", "inherit", "inherit", "ipc"], env, detached: true });
    // The channel is the child's way to notice the supervisor is gone; it must not keep the supervisor alive.
    child.channel?.unref();
    const group = child.pid;
    child.on("exit", async (code, signal) => {
      const ranMs = Date.now() - startedAt;
      if (group !== undefined) await groupEnded(group, stopGraceMs, log);
      if (stopping) return exit(code ?? 0);
      if (ranMs < startupMs) return exit(code ?? 1);
      const now = Date.now();
      deaths = [...deaths.filter((at) => now - at < windowMs), now];
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      if (deaths.length > maxRestarts) {
        log(`Quarry's server ${how}: ${deaths.length} deaths within ${Math.round(windowMs / 1000)} s, so it is not restarted again (see the log above)`);
        return exit(code || 1);
      }
      const pauseMs = Math.min(30_000, 1_000 * 2 ** (deaths.length - 1));
      log(`Quarry's server ${how} after ${Math.round(ranMs / 1000)} s; restarting it in ${pauseMs / 1000} s`);
      setTimeout(() => {
        if (stopping) return exit(0);
        restarts += 1;
        start();
      }, pauseMs);
    });
    // A child that could not be spawned at all emits "error" and no "exit".
    child.on("error", (error) => {
      log(`Quarry's server could not be started: ${error.message}`);
      if (child.pid === undefined) exit(1);
    });
  };
  start();
  return {
    stop(signal = "SIGTERM") {
      if (stopping) return;
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return exit(0); // between a death and its restart
      child.kill(signal);
      // A child that ignores the signal or hangs: the whole group is killed after the grace ("exit" then follows).
      setTimeout(() => killGroup(child.pid, stopGraceMs, log), stopGraceMs).unref();
    },
    restarts: () => restarts,
    pid: () => child?.pid,
  };
}

/**
 * Whether any process of the group is still running. A member that has ended but waits to be reaped by whoever
 * adopted it (a zombie, every thread of it gone) does not count: some inits reap only every second or two (measured here: 1.4 s), and one
 * in a container may never. /proc tells them apart (Linux); elsewhere a zombie counts as running.
 */
export function groupAlive(group) {
  try {
    process.kill(-group, 0);
  } catch (error) {
    if (error.code !== "EPERM") return false;
  }
  let pids;
  try {
    pids = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return true;
  }
  return pids.some((pid) => {
    const stat = procStat(pid);
    return stat !== undefined && stat.pgrp === group && !ended(pid, stat);
  });
}

/**
 * A zombie whose threads have all exited. A process's main thread shows "Z" as soon as it has exited, while its other
 * threads (an engine's watchdog, libuv's pool) may still be tearing down and hold its descriptors, the data folder's
 * lock among them.
 */
function ended(pid, stat) {
  if (stat.state !== "Z") return false;
  try {
    return fs.readdirSync(`/proc/${pid}/task`).length <= 1;
  } catch {
    return true;
  }
}

function killGroup(group, graceMs, log) {
  if (group === undefined || !groupAlive(group)) return;
  log(`Quarry's processes did not end within ${Math.round(graceMs / 1000)} s of being asked to: killing what is left (SIGKILL)`);
  try {
    process.kill(-group, "SIGKILL");
  } catch {
    // Gone meanwhile.
  }
}

/**
 * Resolves once no process of the group is left; kills what remains of it after `graceMs`. A second later it resolves
 * anyway: without /proc, what is still there is a zombie no one reaps (this process as PID 1 of a container without
 * an init adopts the server's orphans but never waits for them), ended already.
 */
async function groupEnded(group, graceMs, log) {
  const deadline = Date.now() + graceMs;
  let killed = false;
  while (groupAlive(group) && Date.now() < deadline + 1_000) {
    if (!killed && Date.now() >= deadline) {
      killGroup(group, graceMs, log);
      killed = true;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Runs `stop` once, when this process is asked to stop: SIGINT, SIGTERM or SIGHUP, or the process that
 * supervises it is gone — its IPC channel closed (a supervised server whose supervisor died, even by SIGKILL), or
 * one of `watch` (pids of ancestors, see `npmAncestors`) ended.
 * @param {(reason: string) => void} stop
 * @param {{ watch?: number[] }} [options]
 */
export function onStopRequest(stop, { watch = [] } = {}) {
  let asked = false;
  const once = (reason) => {
    if (asked) return;
    asked = true;
    stop(reason);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => once(signal));
  if (process.channel) {
    process.on("disconnect", () => once("its supervisor is gone"));
    // Not a reason to stay alive: the server's listening socket is.
    process.channel.unref();
  }
  if (watch.length > 0) {
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent || watch.some((pid) => !processExists(pid))) once("the process that started it is gone");
    }, 500).unref();
  }
}

function processExists(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/** A process's name, state, parent pid and process group from /proc (Linux), or undefined. */
function procStat(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split at its last ")".
    const close = stat.lastIndexOf(")");
    const [state, ppid, pgrp] = stat.slice(close + 2).split(" ");
    return { comm: stat.slice(stat.indexOf("(") + 1, close), state, ppid: Number(ppid), pgrp: Number(pgrp) };
  } catch {
    return undefined;
  }
}

/**
 * When `npm start` started this process: npm's pid and the shell between (measured with npm 11: SIGINT to npm does
 * nothing while its script runs, SIGTERM ends npm and its shell, SIGHUP ends npm alone; none reaches the script). The
 * supervisor stops when any of them is gone. Empty when npm did not start it (run by systemd or by hand, its
 * parent may come and go: nohup).
 * @returns {number[]}
 */
export function npmAncestors(env = process.env) {
  if (!env.npm_lifecycle_event) return [];
  const chain = [];
  let pid = process.ppid;
  for (let depth = 0; depth < 3 && pid > 1; depth++) {
    const stat = procStat(pid);
    if (!stat) break;
    chain.push(pid);
    if (stat.comm.startsWith("npm")) return chain;
    pid = stat.ppid;
  }
  // No npm found (another platform, or npm renamed): its direct parent, which npm's death takes with it.
  return [process.ppid];
}
