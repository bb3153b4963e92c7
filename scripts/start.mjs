// Starts the built app on PORT (default 3000) with the embedded defaults.
// `npm start` runs `next build` first when no build exists, so a fresh clone needs nothing else.
import { spawnSync, spawn } from "node:child_process";
import fs from "node:fs";

const port = process.env.PORT ?? "3000";
process.env.NEXTAUTH_URL ??= process.env.QUARRY_PUBLIC_URL ?? `http://localhost:${port}`;
const next = "node_modules/next/dist/bin/next";
if (!fs.existsSync(".next/BUILD_ID")) {
  const build = spawnSync(process.execPath, [next, "build"], { stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
// scripts/server.mjs, not `next start`: it stamps each request with its socket address (see that file).
// MALLOC_ARENA_MAX: glibc gives each thread that allocates its own malloc arena and keeps what those
// arenas held after the threads end (extraction workers, the first boot's indexing): the idle server
// held ~170 MB more RSS for good with the default (bench/embedded-memory.ts: 496 -> 322 MB PSS idle).
// MALLOC_MMAP_THRESHOLD_: glibc serves a block of at least this size (128 KiB) from its own mapping,
// returned to the system when freed. Left to itself it raises the threshold after each such free, and
// the first boot's large buffers (demo load, copies, indexing) then stayed in the main heap for good:
// 382 -> 280 MB PSS for the idle web server after a first boot, 215 -> 181 MB for the primary engine.
// Read by glibc when the process starts, so both are set here, for the server and the engines it forks.
const server = spawn(process.execPath, ["scripts/server.mjs"], {
  stdio: "inherit",
  env: { MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "131072", ...process.env, PORT: port, NODE_ENV: "production" },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => process.exit(code ?? 0));
