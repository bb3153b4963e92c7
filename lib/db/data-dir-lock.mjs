// One process per data folder (issue 26 §6): two servers on one QUARRY_DATA_DIR both came up, both
// wrote to the embedded database, and the folder no longer started (PGlite `Aborted()`).
//
// The lock is a listening Unix domain socket, `quarry.lock` in the data folder (a named pipe on
// Windows). Node has no flock(); a listening socket is the exclusive resource it does have, and the
// operating system releases it with the last process holding it, however that process ends:
//   - a starter binds and listens on a socket under a random name, then hard-links it to
//     `quarry.lock`: link() fails with EEXIST while the name exists, so exactly one starter gets it,
//     and the name only ever appears already listening (bind and listen are two system calls; a
//     socket seen between them would look dead);
//   - connect() reaches a live holder, which answers with who it is (pid, process, since);
//   - a file left by a process that died (SIGKILL, power loss) refuses connections (ECONNREFUSED):
//     it is stale, and is removed under a short takeover mutex (an O_EXCL file), only while the name
//     still is the very file that was found dead (inode and change time), so a starter that was slow
//     cannot remove the next holder's file.
// The holder passes the listening socket to every embedded engine process it forks
// (lib/db/embedded-engine.ts), so the lock lasts until the last of them has exited: an engine
// orphaned by a killed server keeps the folder locked while it shuts down, and a new server waits
// for it instead of opening the same files beside it.
//
// Plain ESM with no dependencies: scripts/server.mjs takes the lock before Next.js boots, and the
// bundled app (lib/db/client.ts) takes the same one again; the registry lives on globalThis so both
// copies of this module see one lock per folder per process (counted references).
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export const LOCK_FILE = "quarry.lock";
/** How long a start waits for a holder that is shutting down (an orphaned engine finishing its close). */
export const STOPPING_WAIT_MS = 30_000;
/** A takeover mutex older than this was left by a process that died within the few milliseconds it is held. */
const TAKEOVER_STALE_MS = 10_000;
/** Unix socket paths are limited to 104–108 bytes; a longer folder is reached through a short symlink. */
const MAX_SOCKET_PATH = 100;

const registry = (globalThis[Symbol.for("quarry.dataDirLocks")] ??= new Map());

/** The data folder is held by another live process. `holder` is what it said about itself, if it answered. */
export class DataDirLocked extends Error {
  constructor(dir, holder) {
    const who = holder?.pid
      ? `pid ${holder.pid}${holder.process ? `, ${holder.process}` : ""}${holder.since ? `, since ${holder.since}` : ""}${holder.host && holder.host !== os.hostname() ? `, on ${holder.host}` : ""}${holder.stopping ? ", still shutting down" : ""}`
      : "a process that did not say which";
    super(
      `QUARRY_DATA_DIR ${dir} is in use by another Quarry process (${who}). One data folder serves one process: ` +
        "two would corrupt its embedded database. Stop that process first, or give this one its own QUARRY_DATA_DIR.",
    );
    this.name = "DataDirLocked";
    this.dir = dir;
    this.holder = holder;
    // A command-line script that does not catch it prints this sentence, not a stack trace.
    this.stack = `${this.name}: ${this.message}`;
  }
}

/**
 * Takes the exclusive lock of `dir` (created if missing) for this process, or throws DataDirLocked
 * naming the holder. Taken again in the same process, it counts a reference. A holder that is
 * shutting down (an orphaned engine) or does not answer (busy) is waited for up to `waitMs`.
 */
export async function lockDataDir(dir, { processName = defaultProcessName(), waitMs = STOPPING_WAIT_MS } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  const real = fs.realpathSync(dir);
  const existing = registry.get(real);
  if (existing) {
    existing.refs += 1;
    return handleOf(existing);
  }
  const holder = { pid: process.pid, process: processName, since: new Date().toISOString(), host: os.hostname() };
  const address = lockAddress(real);
  const deadline = Date.now() + waitMs;
  let waited = false;
  const server = net.createServer((socket) => {
    socket.on("error", () => undefined);
    socket.end(`${JSON.stringify(holder)}\n`);
  });
  try {
    await take(server, address, real, async (found) => {
      // A silent holder is busy (an orphaned engine inside a statement, until its watchdog ends it): wait, as for one shutting down.
      if ((found.holder === undefined || ownerGone(found.holder)) && Date.now() < deadline) {
        if (!waited) logWaiting(real, found.holder, deadline);
        waited = true;
        await sleep(200);
        return;
      }
      throw new DataDirLocked(real, found.holder);
    });
  } catch (error) {
    server.close();
    address.cleanup();
    throw error;
  }
  // The server must not keep a script alive, and nothing here may end the process.
  server.unref();
  server.on("error", () => undefined);
  const entry = { dir: real, server, holder, refs: 1, address, identity: identityOf(address.path) };
  registry.set(real, entry);
  return handleOf(entry);
}

/**
 * Makes `server` the one listening at `address.path`. `onHeld` is called for a live holder: it
 * returns to try again, or throws.
 */
async function take(server, address, real, onHeld) {
  const fail = (code) => Object.assign(new Error(`cannot lock QUARRY_DATA_DIR ${real}: ${code}`), { code });
  if (process.platform === "win32") {
    // A named pipe vanishes with its last handle: never stale, and creating it is the exclusive step.
    for (;;) {
      const bound = await listen(server, address.path);
      if (bound === true) return;
      if (bound !== "EADDRINUSE") throw fail(bound);
      const found = await probe(address.path);
      if (found.state === "alive") await onHeld(found);
    }
  }
  const temporary = `${address.path}.${crypto.randomBytes(4).toString("hex")}`;
  const bound = await listen(server, temporary);
  if (bound !== true) throw fail(bound);
  try {
    for (;;) {
      try {
        fs.linkSync(temporary, address.path);
        return;
      } catch (error) {
        if (error.code !== "EEXIST") throw error;
      }
      const identity = identityOf(address.path);
      if (!identity) continue;
      const found = await probe(address.path);
      if (found.state === "alive") await onHeld(found);
      else if (found.state === "stale") await removeStale(address.path, identity);
    }
  } finally {
    // The socket stays reachable through the lock's name; closing the server later removes nothing else.
    fs.rmSync(temporary, { force: true });
  }
}

/** What tells one file at a path from the next one there: inode and change time (inode numbers are reused). */
function identityOf(file) {
  try {
    const stat = fs.lstatSync(file, { bigint: true });
    return `${stat.dev}:${stat.ino}:${stat.ctimeNs}`;
  } catch {
    return null;
  }
}

/** The lock this process holds on `dir` or on a folder containing it (an engine's folder inside QUARRY_DATA_DIR). */
export function heldDataDirLock(dir) {
  let current = path.resolve(dir);
  try {
    current = fs.realpathSync(current);
  } catch {
    // Not created yet: its parent decides.
  }
  for (;;) {
    const entry = registry.get(current);
    if (entry) return { dir: entry.dir, server: entry.server, holder: entry.holder };
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** Who holds `dir`'s lock: the holder's own answer, `{ state: "stale" }` or `{ state: "absent" }`. */
export async function probeDataDirLock(dir) {
  const address = lockAddress(fs.realpathSync(dir));
  try {
    return await probe(address.path);
  } finally {
    address.cleanup();
  }
}

function handleOf(entry) {
  let released = false;
  return {
    dir: entry.dir,
    holder: entry.holder,
    /**
     * Drops this reference; the last one removes the lock's name and closes the socket. Call it
     * only after the engines this process started have exited: they share the socket, and closing
     * it here removes the file they still listen on.
     */
    release() {
      if (released) return;
      released = true;
      entry.refs -= 1;
      if (entry.refs > 0) return;
      registry.delete(entry.dir);
      // The name first, while this socket still answers on it (no one can have taken it over), then the socket.
      if (process.platform !== "win32" && identityOf(entry.address.path) === entry.identity) fs.rmSync(entry.address.path, { force: true });
      entry.server.close();
      entry.address.cleanup();
    },
  };
}

/** One line in the format of lib/log.ts (this module is loaded before it, and outside the bundle). */
function logWaiting(dir, holder, deadline) {
  const message = holder ? "data folder held by a process that is shutting down; waiting for it" : "data folder held by a process that does not answer (busy); waiting for it";
  const fields = { dataDir: dir, holder: holder ?? null, waitMs: Math.max(0, deadline - Date.now()) };
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: "warn", message, ...fields })}\n`);
}

function defaultProcessName() {
  const script = process.argv[1] ? path.basename(process.argv[1]) : "node";
  return `${script} (node ${process.pid})`;
}

/**
 * Where the lock socket is bound: `<dir>/quarry.lock`, through a short symlink when that path is
 * too long for a socket address, or a named pipe on Windows (released with its last handle, so
 * never stale).
 */
function lockAddress(real) {
  if (process.platform === "win32") {
    const name = crypto.createHash("sha256").update(real.toLowerCase()).digest("hex").slice(0, 32);
    return { path: `\\\\?\\pipe\\quarry-lock-${name}`, cleanup: () => undefined };
  }
  const direct = path.join(real, LOCK_FILE);
  // Room for the temporary name's suffix (take()).
  if (Buffer.byteLength(direct) + 9 <= MAX_SOCKET_PATH) return { path: direct, cleanup: () => undefined };
  const alias = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-lock-"));
  fs.symlinkSync(real, path.join(alias, "d"));
  return { path: path.join(alias, "d", LOCK_FILE), cleanup: () => fs.rmSync(alias, { recursive: true, force: true }) };
}

/** true once listening, or the error code that stopped it. */
function listen(server, address) {
  return new Promise((resolve) => {
    const onError = (error) => resolve(error.code ?? String(error));
    server.once("error", onError);
    server.listen(address, () => {
      server.off("error", onError);
      resolve(true);
    });
  });
}

/** Connects to the lock socket: a live holder answers with a line of JSON about itself. */
function probe(address, timeoutMs = 2_000) {
  return new Promise((resolve) => {
    const socket = net.connect(address);
    let text = "";
    const done = (result) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    // Connected but silent (its event loop busy): alive all the same.
    const timer = setTimeout(() => done({ state: "alive", holder: undefined }), timeoutMs);
    socket.on("data", (chunk) => {
      text += chunk.toString("utf8");
      if (text.includes("\n") || text.length > 4096) done({ state: "alive", holder: parseHolder(text) });
    });
    socket.on("end", () => done({ state: "alive", holder: parseHolder(text) }));
    socket.on("error", (error) => {
      if (error.code === "ECONNREFUSED") done({ state: "stale" });
      else if (error.code === "ENOENT") done({ state: "absent" });
      // Anything else (a full backlog: EAGAIN) means someone is there.
      else done({ state: "alive", holder: undefined });
    });
  });
}

function parseHolder(text) {
  try {
    const value = JSON.parse(text.split("\n")[0]);
    return value && typeof value === "object" ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the holder says it is going away: an engine whose server is gone (it answers
 * `stopping`), or a holder on this machine whose owning process no longer exists (an engine
 * answering before it noticed its server died).
 */
function ownerGone(holder) {
  if (!holder) return false;
  if (holder.stopping) return true;
  if (holder.host !== os.hostname() || !Number.isInteger(holder.pid)) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return error.code === "ESRCH";
  }
}

/**
 * Removes a stale lock file: under a takeover mutex, only while the name still is the file that was
 * found dead (`identity`), and only if it still refuses connections. Another starter may have removed
 * it and linked a live one meanwhile; that one is left alone.
 */
async function removeStale(address, identity) {
  const mutex = `${address}.takeover`;
  try {
    fs.writeFileSync(mutex, `${process.pid}\n`, { flag: "wx" });
  } catch (error) {
    if (error.code !== "EEXIST") throw error;
    try {
      if (Date.now() - fs.statSync(mutex).mtimeMs > TAKEOVER_STALE_MS) fs.rmSync(mutex, { force: true });
    } catch {
      // Gone meanwhile.
    }
    await sleep(50);
    return;
  }
  try {
    if (identityOf(address) === identity && (await probe(address)).state === "stale" && identityOf(address) === identity) fs.rmSync(address, { force: true });
  } finally {
    fs.rmSync(mutex, { force: true });
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
