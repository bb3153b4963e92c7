// Starts the built app on PORT (default 3000) with the embedded defaults.
// `npm start` runs `next build` first when no build exists, so a fresh clone needs nothing else.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { MALLOC_ENV } from "./malloc-env.mjs";
import { supervise } from "./supervise.mjs";

const port = process.env.PORT ?? "3000";
process.env.NEXTAUTH_URL ??= process.env.QUARRY_PUBLIC_URL ?? `http://localhost:${port}`;
const next = "node_modules/next/dist/bin/next";
if (!fs.existsSync(".next/BUILD_ID")) {
  const build = spawnSync(process.execPath, [next, "build"], { stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
// scripts/server.mjs, not `next start`: it stamps each request with its socket address (see that file).
// The allocator settings (scripts/malloc-env.mjs) hold the server's memory down; the engines it forks inherit them.
// Supervised (scripts/supervise.mjs): a server that dies while serving is started again.
const supervisor = supervise({
  command: process.execPath,
  args: ["scripts/server.mjs"],
  env: { ...MALLOC_ENV, ...process.env, PORT: port, NODE_ENV: "production" },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => supervisor.stop(signal));
