// The app's HTTP server: Next's request handler behind a plain node:http server that stamps each request
// with its socket's remote address. Route handlers cannot see the socket, and X-Forwarded-For is whatever
// the client wrote (Next only fills it in when absent), so rate limits and sign-in throttling key on this
// header instead (lib/security/client-address.ts). A client-sent copy is always overwritten, and the key proves
// the stamp came from this process.
//
// Start order (issue 26 §6, issue 32): the configuration is checked first (an invalid value exits 1 with a
// message naming the variable and field, before anything listens), then the port is bound and the data folder locked second, both before
// Next.js prepares the app, whose instrumentation opens (and in embedded mode migrates) the database.
// A server that cannot have its port, or whose QUARRY_DATA_DIR another process holds, exits without
// having touched the database. Requests that arrive while the app boots wait for it.
//
// Stopping (issue 47 §1): SIGINT, SIGTERM or SIGHUP, or its supervisor gone (scripts/supervise.mjs: the IPC
// channel closes when scripts/start.mjs dies, even by SIGKILL) closes the port and exits; the engines it forked see
// their channel close and close their databases (lib/db/engine-process.mjs), and the supervisor waits for them.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import next from "next";
import { DataDirLocked, lockDataDir } from "../lib/db/data-dir-lock.mjs";
import { describePortHolder } from "./port-holder.mjs";
import { onStopRequest } from "./supervise.mjs";

const PEER_HEADER = "x-quarry-peer";
const PEER_KEY_HEADER = "x-quarry-peer-key";
const peerKey = crypto.randomBytes(24).toString("base64url");
globalThis[Symbol.for("quarry.peerKey")] = peerKey;

// 0. The configuration: every variable lib/config reads, parsed by the same code the app uses (scripts/check-config.ts
// prints the message). A child process because lib/config is TypeScript; it takes about half a second.
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const check = spawnSync(process.execPath, ["--conditions=react-server", "--import", "tsx", "scripts/check-config.ts"], { cwd: root, stdio: "inherit" });
if (check.status !== 0) process.exit(check.status ?? 1);

const port = Number(process.env.PORT || "3000");

let handle;
let markReady;
const ready = new Promise((resolve) => (markReady = resolve));
const server = http.createServer((req, res) => {
  req.headers[PEER_HEADER] = req.socket.remoteAddress ?? "";
  req.headers[PEER_KEY_HEADER] = peerKey;
  if (handle) handle(req, res);
  else void ready.then(() => handle(req, res));
});
onStopRequest(() => {
  // In-flight requests finish; idle keep-alive connections would hold close() open, so it is bounded.
  server.close(() => process.exit(0));
  server.closeIdleConnections();
  setTimeout(() => process.exit(0), 3000).unref();
});

// 1. The port. All interfaces, as `next start` does (HOSTNAME is often the machine's name in containers, so it is not read).
await new Promise((resolve) => {
  server.once("error", (error) => {
    const holder = error.code === "EADDRINUSE" ? describePortHolder(port) : undefined;
    const why = error.code !== "EADDRINUSE" ? error.message : holder ? `${holder} is using it` : "another process is using it";
    console.error(`Quarry cannot listen on port ${port}: ${why}. Nothing was started.`);
    process.exit(1);
  });
  server.listen(port, resolve);
});

// 2. The data folder, when the embedded database lives there (an empty DATABASE_URL means none is set).
if (!process.env.DATABASE_URL) {
  const dataDir = path.resolve(process.env.QUARRY_DATA_DIR || ".data");
  try {
    // Held for the life of this process; the operating system releases it however the process ends.
    await lockDataDir(dataDir, { processName: `Quarry server on port ${server.address().port}` });
  } catch (error) {
    console.error(error instanceof DataDirLocked ? error.message : `Quarry cannot lock QUARRY_DATA_DIR ${dataDir}: ${error.message}`);
    process.exit(1);
  }
}

// 3. The app: prepare() starts instrumentation.ts, which opens the database and boots (lib/boot.ts). prepare() does
// not wait for that boot, so instrumentation.ts reports its end through this hook (issue 32: "ready" only once it is).
const booted = new Promise((resolve, reject) => (globalThis[Symbol.for("quarry.boot")] = { resolve, reject }));
booted.catch(() => undefined); // a failure while prepare() still runs is reported below, not as an unhandled rejection
const app = next({ dev: false, hostname: "localhost", port });
try {
  await app.prepare();
} catch (error) {
  console.error("Quarry failed to start:", error);
  process.exit(1);
}
handle = app.getRequestHandler();
markReady();
try {
  await booted;
} catch (error) {
  console.error("Quarry failed to start:", error);
  process.exit(1);
}
// One line for whoever started it, printed only now that the database is open and the boot finished.
const publicUrl = process.env.QUARRY_PUBLIC_URL || `http://localhost:${server.address().port}`;
const demo = process.env.QUARRY_SEED_DEMO === "false" ? "" : " and sign in as admin@acme.test / quarry-demo (the demo accounts are on the sign-in page)";
console.log(`Quarry is ready: open ${publicUrl}${demo}`);
