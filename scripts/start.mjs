// Starts the built app on PORT (default 3000) with the embedded defaults.
// `npm start` runs `next build` first when no build exists, so a fresh clone needs nothing else.
//
// This process is the supervisor of everything Quarry runs (issue 47 §1): it prints its pid, and SIGINT,
// SIGTERM or SIGHUP to it — or npm ending, which forwards no signal to it — stops the build or the server
// with every engine, waiting for them (scripts/supervise.mjs).
import { spawn } from "node:child_process";
import fs from "node:fs";
import { MALLOC_ENV } from "./malloc-env.mjs";
import { npmAncestors, onStopRequest, STOP_GRACE_MS, supervise } from "./supervise.mjs";

const port = process.env.PORT ?? "3000";
process.env.NEXTAUTH_URL ??= process.env.QUARRY_PUBLIC_URL ?? `http://localhost:${port}`;
const next = "node_modules/next/dist/bin/next";
/** What a stop request does now: end the build, later the supervised server. */
let stop = (reason) => process.exit(reason === "SIGINT" ? 130 : 0);
onStopRequest((reason) => stop(reason), { watch: npmAncestors() });
console.log(`Quarry's supervisor pid ${process.pid}: stop with kill ${process.pid} or Ctrl-C`);

if (!fs.existsSync(".next/BUILD_ID")) {
  const code = await build();
  if (code !== 0) process.exit(code);
}
// scripts/server.mjs, not `next start`: it stamps each request with its socket address (see that file).
// The allocator settings (scripts/malloc-env.mjs) hold the server's memory down; the engines it forks inherit them.
// Supervised (scripts/supervise.mjs): a server that dies while serving is started again.
const supervisor = supervise({
  command: process.execPath,
  args: ["scripts/server.mjs"],
  env: { ...MALLOC_ENV, ...process.env, PORT: port, NODE_ENV: "production" },
});
stop = (reason) => {
  console.error(`Stopping Quarry (${reason})…`);
  supervisor.stop("SIGTERM");
};

/**
 * The production build, once per clone, without next's own type check (next.config.ts: `npm test` and CI type-check
 * the same code). next prints its phases but stays silent for minutes inside one (compiling above all),
 * so a line with the elapsed time and the phase follows whenever it has printed nothing for 15 s.
 * @returns {Promise<number>} its exit code
 */
function build() {
  console.log("No production build yet (.next/BUILD_ID): building it once, which takes minutes (README, \"Two commands\").");
  const started = Date.now();
  const child = spawn(process.execPath, [next, "build"], {
    env: { ...process.env, QUARRY_BUILD_WITHOUT_TYPECHECK: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group, so a stop ends its workers too.
    detached: true,
  });
  let phase = "starting";
  let lastOutput = Date.now();
  const elapsed = () => {
    const seconds = Math.round((Date.now() - started) / 1000);
    return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  };
  const forward = (stream, out) => {
    let pending = "";
    stream.on("data", (chunk) => {
      pending += chunk.toString();
      const lines = pending.split("\n");
      pending = lines.pop();
      for (const line of lines) {
        out.write(`${line}\n`);
        // The phase is next's latest line that starts one ("Creating an optimized production build ...", "Running
        // TypeScript ...", "Collecting page data using 1 worker ..."); its "✓ …" lines say what finished meanwhile.
        const text = line.replace(/\x1b\[[0-9;]*m/g, "").trim();
        if (/^[A-Z].*(\.\.\.|…)$/.test(text)) phase = text;
        lastOutput = Date.now();
      }
    });
  };
  forward(child.stdout, process.stdout);
  forward(child.stderr, process.stderr);
  const ticker = setInterval(() => {
    if (Date.now() - lastOutput < 15_000) return;
    console.log(`  … building for ${elapsed()} (${phase})`);
    lastOutput = Date.now();
  }, 1_000);
  stop = (reason) => {
    console.error(`Stopping the build (${reason})…`);
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      // Already gone.
    }
    setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Gone.
      }
      process.exit(1);
    }, STOP_GRACE_MS).unref();
  };
  return new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      clearInterval(ticker);
      if (code === 0) console.log(`Built in ${elapsed()}.`);
      else console.error(`The build ${signal ? `was stopped by ${signal}` : `failed (exit code ${code})`} after ${elapsed()}.`);
      resolve(code ?? 1);
    });
  });
}
