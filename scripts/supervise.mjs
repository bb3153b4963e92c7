// Keeps one child process running (issue 41 §5): a process that dies while serving (a native panic that
// aborts it, an out-of-memory kill, an unexpected exit) is started again, so one hostile request
// cannot leave the site down until someone notices. What is not restarted:
//   - a child that dies before it has run `startupMs` (a failed start: a port in use, an invalid
//     configuration, a locked data folder): its exit code is the supervisor's, as before;
//   - a child stopped on purpose: SIGINT and SIGTERM to the supervisor are passed on and end it with
//     the child;
//   - a crash loop: past `maxRestarts` deaths within `windowMs` it gives up and exits non-zero.
// Restarts wait a growing pause (1 s, 2 s, 4 s … at most 30 s), reset after a child has served for
// `windowMs`. Plain ESM: scripts/start.mjs runs it before anything is built or bundled.
import { spawn } from "node:child_process";

/**
 * @param {{ command: string, args: string[], env?: NodeJS.ProcessEnv, startupMs?: number, maxRestarts?: number,
 *   windowMs?: number, log?: (line: string) => void, onExit?: (code: number) => void }} options
 * @returns {{ stop: (signal?: NodeJS.Signals) => void, restarts: () => number }}
 */
export function supervise(options) {
  const { command, args, env = process.env, startupMs = 30_000, maxRestarts = 5, windowMs = 600_000 } = options;
  const log = options.log ?? ((line) => console.error(line));
  const onExit = options.onExit ?? ((code) => process.exit(code));
  let stopping = false;
  let child;
  let deaths = [];
  let restarts = 0;

  const start = () => {
    const startedAt = Date.now();
    child = spawn(command, args, { stdio: "inherit", env });
    child.on("exit", (code, signal) => {
      const ranMs = Date.now() - startedAt;
      if (stopping) return onExit(code ?? 0);
      if (ranMs < startupMs) return onExit(code ?? 1);
      const now = Date.now();
      deaths = [...deaths.filter((at) => now - at < windowMs), now];
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      if (deaths.length > maxRestarts) {
        log(`Quarry's server ${how}: ${deaths.length} deaths within ${Math.round(windowMs / 1000)} s, so it is not restarted again (see the log above)`);
        return onExit(code || 1);
      }
      const pauseMs = Math.min(30_000, 1_000 * 2 ** (deaths.length - 1));
      log(`Quarry's server ${how} after ${Math.round(ranMs / 1000)} s; restarting it in ${pauseMs / 1000} s`);
      setTimeout(() => {
        if (stopping) return onExit(0);
        restarts += 1;
        start();
      }, pauseMs);
    });
  };
  start();
  return {
    stop(signal = "SIGTERM") {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      else onExit(0);
    },
    restarts: () => restarts,
  };
}
