// npm run bench -- store-cost [chunks, default 445]: where the store step of indexing spends its time.
// The same binary COPY of `chunks` 500-word chunks (384-dim vectors; 445 is a 200,000-word text) into
// a copy of document_chunks (CREATE TABLE … LIKE … INCLUDING ALL: columns and indexes, plus migration
// 0020's trigger that fills tsv; no foreign keys or policies, so the database's own table is never
// altered: on PostgreSQL it is the server's shared database): first without tsvectors (the trigger
// computes them, as every store did before the calculator), then with the calculator's tsvectors
// supplied, then also with the local model's HNSW index dropped, then the GIN index on tsv too, then
// the tsv column too; and to_tsvector alone over the same texts with the 'english' configuration and
// with 'simple' (no stemming), and the calculator alone, for comparison. Each figure is the median of
// 3 COPYs in the same run, on a scratch database of each engine.
import { randomUUID } from "node:crypto";
import { withRawTransaction } from "@/lib/db/bulk";
import { ChunkCopyWriter, CHUNK_COPY_COLUMNS } from "@/lib/documents/indexing/chunk-copy";
import { prose } from "@/lib/documents/extract/fixtures/generate";
import { embeddedTsvectorWorker, tsvectorCalculator } from "@/lib/documents/indexing/tsvector-calculator";
import { getEmbedder } from "@/lib/embeddings";
import { LOCAL_EMBEDDING_MODEL } from "@/lib/config/embedding-models";
import { benchEngines, positional, withScratchDb } from "./lib/scratch-db";

const ORG = "org_bench_store";
const TABLE = "bench_store_chunks";

export default async function bench(args: string[]): Promise<void> {
  const count = Number(positional(args, ["--engine"])[0] ?? 445);
  const texts = Array.from({ length: count }, (_, i) => prose(500, i));
  const vectors = await getEmbedder().embedDocuments(texts);
  for (const engine of benchEngines(args)) {
    await withScratchDb(
      "store-cost",
      async (db) => {
        await db.system.exec(`DROP TABLE IF EXISTS ${TABLE}; CREATE TABLE ${TABLE} (LIKE document_chunks INCLUDING ALL);
          CREATE TRIGGER ${TABLE}_fill_tsv BEFORE INSERT OR UPDATE OF text, tsv ON ${TABLE} FOR EACH ROW EXECUTE FUNCTION document_chunks_fill_tsv()`);
        if (db.kind === "pglite") await embeddedTsvectorWorker().warm();
        const calculator = tsvectorCalculator(db);
        const computeAll = async () => {
          const out: Uint8Array[] = [];
          // A new scope each time: the calculator remembers nothing of an earlier pass.
          const scope = randomUUID();
          for (let from = 0; from < texts.length; from += 128) {
            const batch = await calculator?.compute(texts.slice(from, from + 128), scope);
            if (!batch) throw new Error("the tsvector calculator is not available");
            out.push(...batch);
          }
          return out;
        };
        const tsv = await computeAll();
        let supplied = false;
        const indexNamed = async (pattern: string) =>
          (await db.system.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE tablename = $1 AND indexdef ILIKE $2", [TABLE, pattern]))[0].indexname;
        let generation = 0;
        const copyOnce = async () => {
          generation++;
          const writer = new ChunkCopyWriter();
          texts.forEach((text, i) =>
            writer.add({ orgId: ORG, documentId: "doc_bench_store", generation, ordinal: i, text, wordStart: 0, wordEnd: 500, pageStart: null, pageEnd: null, rowStart: null, rowEnd: null, model: LOCAL_EMBEDDING_MODEL, embedding: vectors[i], tsv: supplied ? tsv[i] : null }),
          );
          const data = writer.finish();
          const started = performance.now();
          await withRawTransaction(db, (tx) => tx.copyBinary!(`${TABLE} (${CHUNK_COPY_COLUMNS.join(", ")})`, data));
          return performance.now() - started;
        };
        const median = async (measure: () => Promise<number>) => {
          const ms = [await measure(), await measure(), await measure()].sort((a, b) => a - b);
          return ms[1];
        };
        console.log(`\nstore cost, ${db.kind === "pglite" ? "PGlite" : "PostgreSQL"}: binary COPY of ${count} chunks of 500 words, median of 3`);
        const full = await median(copyOnce);
        const line = (label: string, ms: number) =>
          console.log(`  ${label.padEnd(44)} ${ms.toFixed(0).padStart(6)} ms  ${Math.round(count / (ms / 1000)).toLocaleString("en-US").padStart(6)} chunks/s  ${((100 * ms) / full).toFixed(0).padStart(3)}% of the full COPY`);
        try {
          line("as migrated, the database computing tsv (baseline)", full);
          supplied = true;
          line("tsvectors supplied (the calculator's)", await median(copyOnce));
          await db.system.exec(`DROP INDEX ${await indexNamed(`%hnsw%${LOCAL_EMBEDDING_MODEL}%`)}`);
          line("without the local model's HNSW index", await median(copyOnce));
          await db.system.exec(`DROP INDEX ${await indexNamed("%gin%")}`);
          line("also without the GIN index on tsv", await median(copyOnce));
          await db.system.exec(`DROP TRIGGER ${TABLE}_fill_tsv ON ${TABLE}`);
          supplied = false;
          line("also without tsvectors (tsv null, no trigger)", await median(copyOnce));
        for (const config of ["english", "simple"]) {
          line(
            `to_tsvector('${config}') alone, same texts`,
            await median(async () => {
              const started = performance.now();
              await db.system.query(`SELECT sum(length(to_tsvector('${config}', text)))::int FROM ${TABLE} WHERE generation = 1`);
              return performance.now() - started;
            }),
          );
        }
          line(
            "the calculator alone, same texts (off the write path)",
            await median(async () => {
              const started = performance.now();
              await computeAll();
              return performance.now() - started;
            }),
          );
        } finally {
          await db.system.exec(`DROP TABLE IF EXISTS ${TABLE}`);
        }
      },
      engine,
    );
  }
}
