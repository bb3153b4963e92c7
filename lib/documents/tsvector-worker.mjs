// The embedded tsvector calculator: an in-memory PGlite of the same package as the database
// engine, in a worker thread, that computes `to_tsvector('english', text)` for chunks the indexer
// is about to store (lib/documents/tsvector-calculator.ts). The database engine is one
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
// In:  {id, texts: string[]}
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

const started = Date.now();
try {
  const db = await open(workerData?.templatePath);
  parentPort.on("message", async ({ id, texts }) => {
    try {
      const result = await db.query(TSVECTOR_SQL, [texts]);
      parentPort.postMessage({ id, tsv: result.rows.map((row) => row.v) });
    } catch (error) {
      parentPort.postMessage({ id, error: String(error?.message ?? error) });
    }
  });
  parentPort.postMessage({ type: "ready", bootMs: Date.now() - started });
} catch (error) {
  parentPort.postMessage({ type: "failed", error: String(error?.message ?? error) });
}
