// The embedded engine's own process: PGlite (PostgreSQL in WebAssembly) served over the
// PostgreSQL wire protocol on a Unix socket (a small handler below, not pglite-socket's server), so the web process reaches it with `pg` and
// @prisma/adapter-pg exactly as it reaches a PostgreSQL server.
//
// Why a process of its own: PGlite runs each statement to its end on the thread that calls it and
// ignores statement_timeout (WebAssembly has no timer signal). Here a runaway statement blocks only
// this process; the supervisor (lib/db/embedded-engine.ts) kills it at the time limit and starts a
// new one, and PostgreSQL's crash recovery replays the WAL of every committed transaction.
//
// Plain ESM, loaded by path with child_process.fork: Turbopack never bundles it (see
// lib/documents/extract/pdf-worker.mjs for the same arrangement).
//
// Messages: in  {type: "lock", holder} + socket handle | {type: "open", dataDir, socketPath} | {type: "copy", id, sql, data} | {type: "copyOut", id, sql} | {type: "snapshot", id, target} | {type: "close"}
//           out {type: "ready", bootMs} | {type: "failed", message} | {type: "done" | "failed", id, error?, data?}
import fs from "node:fs";
import net from "node:net";
import { Worker } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite/vector";

let db;
let openedDir;
let server;
/** How long an engine whose supervisor died may take to close before its watchdog kills it. */
const ORPHAN_GRACE_MS = 5_000;
/** Set once the supervisor is gone: this engine is closing, and says so to whoever probes the data folder's lock. */
let stopping = false;

async function open({ dataDir, socketPath, sharedBuffersMb }) {
  const started = Date.now();
  // PGlite does not create missing parent folders.
  fs.mkdirSync(dataDir, { recursive: true });
  fs.rmSync(socketPath, { force: true });
  // No worker can launch in this single process, yet PGlite leaves max_parallel_maintenance_workers at 2, so
  // an index build over loaded rows takes the parallel path with the leader alone: pgvector then puts the
  // whole HNSW graph in a shared segment of maintenance_work_mem, which can fail to map ("Out of memory"),
  // stays in the wasm heap for good, and built a 13 MB table's index 1.4x slower than private memory did.
  db = await PGlite.create({
    dataDir,
    extensions: { vector },
    startParams: [
      ...PGlite.defaultStartParams,
      "-c",
      "max_parallel_maintenance_workers=0",
      ...(sharedBuffersMb ? ["-c", `shared_buffers=${sharedBuffersMb}MB`] : []),
    ],
  });
  openedDir = dataDir;
  server = net.createServer((socket) => serve(socket));
  await new Promise((resolve, reject) => server.once("error", reject).listen(socketPath, resolve));
  process.send?.({ type: "ready", bootMs: Date.now() - started });
}

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;
/**
 * What a new connection must not inherit from the session: the previous connection's open transaction
 * and its prepared statements (a new client knows of none, and would fail to prepare one under a name
 * the session still has: "already exists").
 */
const SESSION_RESET = simpleQuery("ROLLBACK; DEALLOCATE ALL");
/** The connection the session's state belongs to: the latest to start (the supervisor keeps one at a time). */
let currentSocket;

/**
 * One client connection: frontend messages go to PGlite in order, each group that arrived together
 * in one turn of PGlite's lock and answered with one write (a query of the extended protocol is
 * five messages: Parse, Bind, Describe, Execute, Sync; one at a time, its round trip took 1.9× that
 * of PGlite in the calling thread, now 1.2×: docs/embedded-engine.md).
 *
 * Not @electric-sql/pglite-socket 0.1.6's server, for two faults measured here: after an error in
 * an extended-protocol message PGlite answers ReadyForQuery at once and again at Sync, which
 * desynchronises node-postgres ("unexpected commandComplete", electric-sql/pglite#958); and its
 * queue interleaves the messages of concurrent connections outside a transaction. This handler
 * drops the premature ReadyForQuery and, as PostgreSQL does, skips messages up to the Sync; the
 * supervisor keeps one connection at a time.
 */
function serve(socket) {
  let buffer = Buffer.alloc(0);
  let started = false;
  let skipToSync = false;
  let chain = Promise.resolve();
  socket.setNoDelay(true);
  socket.on("error", () => undefined);
  socket.on("close", () => {
    // A connection that ends inside a transaction must not leave it open for the next one; once the
    // next has started, the transaction in the session is that one's (its start rolled back ours).
    chain = chain.then(() => (currentSocket === socket && db.isInTransaction() ? db.exec("ROLLBACK") : undefined)).catch(() => undefined);
  });
  socket.on("data", (data) => {
    buffer = Buffer.concat([buffer, data]);
    const messages = [];
    for (;;) {
      let message;
      if (!started) {
        if (buffer.length < 8) break;
        const length = buffer.readInt32BE(0);
        if (buffer.length < length) break;
        message = buffer.subarray(0, length);
        buffer = buffer.subarray(length);
        const code = message.readInt32BE(4);
        if (code === SSL_REQUEST || code === GSS_REQUEST) {
          socket.write("N");
          continue;
        }
        started = true;
        messages.push({ type: "", message });
      } else {
        if (buffer.length < 5) break;
        const length = 1 + buffer.readInt32BE(1);
        if (buffer.length < length) break;
        message = buffer.subarray(0, length);
        buffer = buffer.subarray(length);
        messages.push({ type: String.fromCharCode(message[0]), message });
      }
    }
    if (messages.length > 0) chain = chain.then(() => handle(socket, messages)).catch(() => socket.destroy());
  });

  async function handle(socket, messages) {
    const replies = [];
    let terminated = false;
    await db.runExclusive(async () => {
      for (const { type, message } of messages) {
        if (type === "X") {
          terminated = true;
          break;
        }
        if (skipToSync && type !== "S") continue;
        if (type === "") {
          currentSocket = socket;
          db.execProtocolRawSync(SESSION_RESET);
        }
        const extended = type !== "Q" && type !== "S" && type !== "";
        // A copy: the next call reuses PGlite's reply buffer.
        const reply = Buffer.from(db.execProtocolRawSync(new Uint8Array(message)));
        if (type === "S") skipToSync = false;
        if (extended && containsMessage(reply, "E")) {
          skipToSync = true;
          replies.push(withoutMessage(reply, "Z"));
        } else if (reply.length > 0) {
          replies.push(reply);
        }
      }
    });
    // What execProtocolRaw does after each message (nothing on the Node filesystem, which writes through).
    await db.syncToFs();
    if (replies.length > 0) socket.write(Buffer.concat(replies));
    if (terminated) socket.end();
  }
}

function* backendMessages(reply) {
  for (let at = 0; at + 5 <= reply.length; ) {
    const end = at + 1 + reply.readInt32BE(at + 1);
    yield { type: String.fromCharCode(reply[at]), bytes: reply.subarray(at, end) };
    at = end;
  }
}

function containsMessage(reply, type) {
  for (const message of backendMessages(reply)) if (message.type === type) return true;
  return false;
}

function withoutMessage(reply, type) {
  return Buffer.concat([...backendMessages(reply)].filter((m) => m.type !== type).map((m) => m.bytes));
}

async function close() {
  try {
    server?.close();
    await db?.close();
  } finally {
    process.exit(0);
  }
}

function reply(id, work) {
  work.then(
    (data) => process.send?.({ type: "done", id, data }),
    (error) => process.send?.({ type: "failed", id, error: error instanceof Error ? error.message : String(error) }),
  );
}

function simpleQuery(sql) {
  const text = Buffer.from(`${sql}\0`);
  const message = Buffer.alloc(5 + text.length);
  message.write("Q", 0);
  message.writeInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return new Uint8Array(message);
}

process.on("message", (message) => {
  if (message?.type === "open") {
    open(message).catch((error) => {
      process.send?.({ type: "failed", message: error instanceof Error ? error.message : String(error) });
      process.exit(1);
    });
  } else if (message?.type === "copy") {
    // COPY … FROM '/dev/blob' (see EmbeddedEngine.copyFrom for why not over the socket).
    reply(message.id, db.query(message.sql, [], { blob: new Blob([message.data]) }).then(() => undefined));
  } else if (message?.type === "copyOut") {
    // COPY … TO '/dev/blob': the rows come back as the result's blob (EmbeddedEngine.exportTables).
    reply(message.id, db.query(message.sql).then(async (result) => new Uint8Array(await result.blob.arrayBuffer())));
  } else if (message?.type === "snapshot") {
    // Between two statements (the lock PGlite's own queries take): CHECKPOINT writes every dirty
    // buffer, and nothing writes while the folder is copied.
    reply(
      message.id,
      db.runExclusive(async () => {
        await db.execProtocolRaw(simpleQuery("CHECKPOINT"));
        fs.rmSync(message.target, { recursive: true, force: true });
        fs.cpSync(openedDir, message.target, { recursive: true });
      }),
    );
  } else if (message?.type === "close") {
    void close();
  }
});

// The supervisor is gone (crashed or killed): nothing may keep the data folder open.
process.on("disconnect", () => {
  stopping = true;
  void close();
});

// The data folder's lock (lib/db/data-dir-lock.mjs): the supervisor shares its listening socket
// ({type: "lock", holder} with the socket as handle) before "open". This process holds it until it
// exits, so a server started after the supervisor was killed waits for this engine to finish
// instead of opening the same files beside it. It is never closed here: exiting releases it.
process.on("message", (message, handle) => {
  if (message?.type !== "lock" || !handle) return;
  handle.on("error", () => undefined);
  handle.on("connection", (socket) => {
    socket.on("error", () => undefined);
    socket.end(`${JSON.stringify({ ...message.holder, enginePid: process.pid, stopping })}\n`);
  });
});

// PGlite cannot be interrupted: if the supervisor dies while a long statement runs, the disconnect
// above is not seen until it ends, and the folder would stay locked (and open) that long. A watchdog
// thread notices the supervisor is gone (this process is re-parented) and, if the process is still
// here a few seconds later, kills it. Crash recovery at the next start keeps every committed transaction.
new Worker(
  `const first = process.ppid;
  let goneAt = 0;
  setInterval(() => {
    if (!goneAt && process.ppid !== first) goneAt = Date.now();
    if (goneAt && Date.now() - goneAt > ${ORPHAN_GRACE_MS}) process.kill(process.pid, "SIGKILL");
  }, 250);`,
  { eval: true },
).unref();
