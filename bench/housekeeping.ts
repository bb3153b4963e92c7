// npm run bench -- housekeeping [words, default 100000] [rounds, default 20]: the embedded engine's data folder
// while the same document is re-indexed `rounds` times and then deleted (issue 28 §4). PGlite runs no
// autovacuum: the baseline run does nothing about the dead rows; the housekept run vacuums what is due after
// each re-index, as the worker does when the engine is quiet (lib/documents/indexing/housekeeping.ts). Prints the data
// folder and chunk table sizes, how long each VACUUM held the engine (and the longest wait of a `SELECT 1`
// sent every 10 ms meanwhile), and on the baseline's garbage what each other way of reclaiming it blocks for.
import fs from "node:fs";
import path from "node:path";
import type { Principal } from "@/lib/access/roles";
import { config } from "@/lib/config";
import type { Database } from "@/lib/db/client";
import { createDocument, deleteDocument } from "@/lib/documents/files/documents";
import { vacuumDueTables } from "@/lib/documents/indexing/housekeeping";
import { indexDocument } from "@/lib/documents/indexing/index-document";
import { uploadDocumentFile } from "@/lib/documents/files/upload";
import { withScratchDb } from "./lib/scratch-db";

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += folderBytes(full);
    else if (entry.isFile()) total += fs.statSync(full).size;
  }
  return total;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Words from a small vocabulary, so chunks are ordinary 500-word texts. */
function text(words: number): string {
  const vocabulary = "order refund policy store manager shift delivery supplier invoice pallet forklift temperature chiller alarm voucher loyalty points member".split(" ");
  return Array.from({ length: words }, (_, i) => vocabulary[(i * 7 + Math.floor(i / 13)) % vocabulary.length] + (i % 15 === 14 ? "." : "")).join(" ");
}

async function sizes(db: Database) {
  const [row] = await db.system.query<{ table_bytes: string; hnsw_bytes: string; dead: string; live: string }>(
    `SELECT pg_total_relation_size('document_chunks') AS table_bytes,
            coalesce((SELECT sum(pg_relation_size(i.indexrelid)) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
                      WHERE i.indrelid = 'document_chunks'::regclass AND a.amname = 'hnsw'), 0) AS hnsw_bytes,
            (SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'document_chunks') AS dead,
            (SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'document_chunks') AS live`,
  );
  const dir = path.join(config().dataDir, "pglite");
  return { folder: folderBytes(dir), wal: folderBytes(path.join(dir, "pg_wal")), table: Number(row.table_bytes), hnsw: Number(row.hnsw_bytes), dead: Number(row.dead), live: Number(row.live) };
}

/** Runs `work` while a `SELECT 1` is sent every 10 ms; answers how long work took and the longest a probe waited. */
async function probed(db: Database, work: () => Promise<unknown>): Promise<{ ms: number; longestProbeMs: number }> {
  let longest = 0;
  let done = false;
  const probes = (async () => {
    while (!done) {
      const sent = performance.now();
      await db.system.query("SELECT 1");
      longest = Math.max(longest, performance.now() - sent);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  done = true;
  await probes;
  return { ms: Math.round(ms), longestProbeMs: Math.round(longest) };
}

async function run(words: number, rounds: number, housekeeping: boolean) {
  await withScratchDb("housekeeping", async (db) => {
    const org = `org_bench_${process.pid}`;
    await db.system.query("INSERT INTO organizations (id, slug, name) VALUES ($1, $2, 'Bench')", [org, `bench-${process.pid}`]);
    const principal: Principal = { userId: "usr_bench", orgId: org, orgSlug: `bench-${process.pid}`, orgName: "Bench", role: "admin", locationIds: null, via: "bearer" };
    const record = await createDocument(principal, { filename: "handbook.txt", description: "", tags: [] });
    const bytes = Buffer.from(text(words), "utf8");
    await uploadDocumentFile(principal, record.id, { body: new Blob([new Uint8Array(bytes)]).stream(), declaredType: "text/plain", declaredLength: bytes.length, index: false });
    console.log(`\n${housekeeping ? "housekept (VACUUM of what is due after each re-index)" : "baseline (no housekeeping, as before)"}: ${words} words`);
    const vacuums: { ms: number; longestProbeMs: number }[] = [];
    for (let round = 1; round <= rounds; round++) {
      const indexed = await indexDocument(principal, record.id, { tsvectorCalculator: null });
      if (housekeeping) vacuums.push(await probed(db, () => vacuumDueTables(db)));
      if (round === 1 || round % 5 === 0) {
        const s = await sizes(db);
        console.log(
          `  after ${String(round).padStart(2)} index runs (${indexed.chunk_count} chunks): data folder ${mb(s.folder)} (WAL ${mb(s.wal)}), document_chunks ${mb(s.table)} (HNSW ${mb(s.hnsw)}), dead rows ${s.dead}`,
        );
      }
    }
    if (!housekeeping) {
      // The other ways of reclaiming it, each measured on what the baseline left (live rows and 20 generations of dead
      // ones), in this order: each changes what the next finds.
      for (const [label, sql] of [
        ["VACUUM (INDEX_CLEANUP OFF): heap only, HNSW entries stay", "VACUUM (INDEX_CLEANUP OFF) document_chunks"],
        ["VACUUM (what housekeeping runs; index cleanup)", "VACUUM (ANALYZE) document_chunks"],
        ["REINDEX TABLE (not CONCURRENTLY: one session)", "REINDEX TABLE document_chunks"],
        ["VACUUM FULL (rewrites the table)", "VACUUM FULL document_chunks"],
      ] as const) {
        const result = await probed(db, () => db.system.exec(sql));
        const s = await sizes(db);
        console.log(`  ${label.padEnd(58)} held the engine ${result.ms} ms (SELECT 1 waited up to ${result.longestProbeMs} ms); then data folder ${mb(s.folder)}, document_chunks ${mb(s.table)}`);
      }
    }
    await deleteDocument(principal, record.id);
    if (housekeeping) vacuums.push(await probed(db, () => vacuumDueTables(db, { force: true })));
    const after = await sizes(db);
    console.log(`  after deleting the document: data folder ${mb(after.folder)} (WAL ${mb(after.wal)}), document_chunks ${mb(after.table)} (HNSW ${mb(after.hnsw)})`);
    if (housekeeping) {
      const ms = vacuums.map((v) => v.ms).sort((a, b) => a - b);
      const probes = vacuums.map((v) => v.longestProbeMs).sort((a, b) => a - b);
      console.log(
        `  VACUUM (ANALYZE) of what was due + CHECKPOINT, ${vacuums.length} times: median ${ms[Math.floor(ms.length / 2)]} ms, longest ${ms[ms.length - 1]} ms; ` +
          `a SELECT 1 sent meanwhile waited at most ${probes[probes.length - 1]} ms`,
      );
    }
  });
}

export default async function bench(args: string[]): Promise<void> {
  const words = Number(args[0] ?? 100_000);
  const rounds = Number(args[1] ?? 20);
  await run(words, rounds, false);
  await run(words, rounds, true);
}
