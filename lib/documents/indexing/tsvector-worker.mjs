// The embedded tsvector calculator: an in-memory PGlite of the same package as the database
// engine, in a worker thread, that computes `to_tsvector('english', text)` for chunks the indexer
// is about to store (tsvector-calculator.ts). The database engine is one
// single-threaded process; this moves the text-search computation, most of the cost of storing a
// chunk, onto the machine's other core, while the lexemes stay exactly the engine's own (same
// parser, dictionaries and stop words, hence what its to_tsquery and websearch_to_tsquery match).
//
// Plain ESM, loaded by its path (see lib/db/engine-process.mjs for the same arrangement): Turbopack
// never bundles it. It holds no data: no table is ever created in it.
//
// A fresh in-memory PGlite runs initdb (measured here: 7-10 s of CPU, 830 MB resident); one
// started from a dump of such a fresh cluster boots in 1.7 s with 384 MB. So the first start
// writes that dump (4 MB) to `templatePath` (workerData; in the data folder, named by PGlite's
// version) and every later start loads it. A dump that cannot be read is made again.
//
// Texts are not computed one by one: tsvector-pieces.ts (loaded through tsx, as extract-worker.mjs
// loads its TypeScript) computes each distinct whitespace-separated piece once and assembles the
// texts' tsvectors from them, byte for byte what to_tsvector gives. What it remembers is kept per
// scope (one indexing run), for the last few scopes only.
//
// In:  {id, texts: string[], scope: string}, answered one at a time in order
// Out: {type: "ready", bootMs} once, then per job {id, tsv: Uint8Array[]} or {id, error}
import fs from "node:fs";
import path from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";

/** Same text as TSVECTOR_SQL in tsvector-calculator.ts, which the PostgreSQL path runs. */
const TSVECTOR_SQL =
  "SELECT pg_catalog.tsvectorsend(pg_catalog.to_tsvector('english'::pg_catalog.regconfig, t)) AS v FROM unnest($1::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n";

async function open(templatePath) {
  if (templatePath && fs.existsSync(templatePath)) {
    try {
      return await PGlite.create({ loadDataDir: new Blob([fs.readFileSync(templatePath)]) });
    } catch {
      fs.rmSync(templatePath, { force: true });
    }
  }
  const db = await PGlite.create();
  if (templatePath) {
    const dump = Buffer.from(await (await db.dumpDataDir("gzip")).arrayBuffer());
    fs.mkdirSync(path.dirname(templatePath), { recursive: true });
    // Written whole, then renamed: a concurrent start never reads half a file.
    fs.writeFileSync(`${templatePath}.${process.pid}.tmp`, dump);
    fs.renameSync(`${templatePath}.${process.pid}.tmp`, templatePath);
  }
  return db;
}

/**
 * Scopes whose pieces are remembered: an indexing run's jobs come one after another, and two runs at once
 * are rare; at most 50,000 pieces each (PieceTsvectors), about 17 MB (measured).
 */
const REMEMBERED_SCOPES = 2;

const started = Date.now();
try {
  const db = await open(workerData?.templatePath);
  const { tsImport } = await import("tsx/esm/api");
  const { PieceTsvectors } = await tsImport("./tsvector-pieces.ts", import.meta.url);
  const engine = async (texts) => (await db.query(TSVECTOR_SQL, [texts])).rows.map((row) => row.v);
  const scopes = new Map();
  const remembered = (scope) => {
    let pieces = scopes.get(scope);
    if (!pieces) {
      if (scopes.size >= REMEMBERED_SCOPES) scopes.delete(scopes.keys().next().value);
      pieces = new PieceTsvectors();
      scopes.set(scope, pieces);
    }
    return pieces;
  };
  // One job at a time: a job's pieces must still be remembered when it assembles its texts.
  let queue = Promise.resolve();
  parentPort.on("message", ({ id, texts, scope }) => {
    queue = queue.then(async () => {
      try {
        parentPort.postMessage({ id, tsv: await remembered(scope).tsvectors(texts, engine) });
      } catch (error) {
        parentPort.postMessage({ id, error: String(error?.message ?? error) });
      }
    });
  });
  parentPort.postMessage({ type: "ready", bootMs: Date.now() - started });
} catch (error) {
  parentPort.postMessage({ type: "failed", error: String(error?.message ?? error) });
}
