// npm run bench -- indexing [txt words, default 200000] [pdf pages, default 100; 0: none]: end-to-end indexing
// throughput with the local embedder (read the stored file, extract, chunk, embed, store the
// chunks in batches, swap the generation in), in words/s, with the share of each stage; beside the
// baseline of embedding the same chunk texts alone (the work no indexer can skip).
import { randomUUID } from "node:crypto";
import PDFDocument from "pdfkit";
import type { Principal } from "@/lib/access/roles";
import { createDocument } from "@/lib/documents/files/documents";
import { extractAndChunk } from "@/lib/documents/extract/offthread-client";
import { INDEX_BATCH_CHUNKS, emptyIndexTimings, indexDocument, type IndexTimings } from "@/lib/documents/indexing/index-document";
import { UNIT_CHUNKS } from "@/lib/documents/indexing/store-schedule";
import { uploadDocumentFile } from "@/lib/documents/files/upload";
import { getEmbedder } from "@/lib/embeddings";
import { getDb } from "@/lib/db/client";
import { withRawTransaction } from "@/lib/db/bulk";
import { CHUNK_COPY_COLUMNS, ChunkCopyWriter } from "@/lib/documents/indexing/chunk-copy";
import { vectorLiteral } from "@/lib/documents/indexing/vector-indexes";
import { embeddedTsvectorWorker, tsvectorCalculator, type TsvectorCalculator } from "@/lib/documents/indexing/tsvector-calculator";
import { cores, cpuSeconds } from "./lib/cpu";
import { benchEngines, positional, withScratchDb } from "./lib/scratch-db";

const RUNS = 3;
/** Chunks per second end to end when issue 15 was filed (200,000-word text, PGlite). */
const ISSUE_BASELINE_CHUNKS_PER_S = 304;

/** Prose-like text: Zipf-distributed words from a 3,000-word vocabulary, sentences of 8-20 words. */
function prose(words: number, seed = 7): string {
  let state = seed;
  const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 4294967296;
  const syllables = ["ka", "ro", "mi", "te", "lo", "sa", "ne", "vi", "du", "pa", "re", "to", "an", "el", "or"];
  const vocabulary = Array.from({ length: 3000 }, (_, i) => {
    let w = "";
    for (let n = i + 1; n > 0; n = Math.floor(n / syllables.length)) w += syllables[n % syllables.length];
    return w;
  });
  const out: string[] = [];
  let sentence = 0;
  for (let i = 0; i < words; i++) {
    // Zipf: rank ~ 1/u, clipped to the vocabulary.
    const rank = Math.min(vocabulary.length - 1, Math.floor(1 / Math.max(next(), 1 / vocabulary.length)) - 1);
    let word = vocabulary[rank];
    if (sentence === 0) word = word[0].toUpperCase() + word.slice(1);
    sentence += 1;
    if (sentence >= 8 + Math.floor(next() * 12)) {
      word += ".";
      sentence = 0;
    }
    out.push(word);
  }
  return out.join(" ");
}

async function pdfOf(pages: number, wordsPerPage: number): Promise<Buffer> {
  const doc = new PDFDocument({ size: "A4", compress: true });
  const parts: Buffer[] = [];
  doc.on("data", (c: Buffer) => parts.push(c));
  const done = new Promise<void>((resolve) => doc.on("end", () => resolve()));
  for (let p = 0; p < pages; p++) {
    if (p > 0) doc.addPage();
    doc.fontSize(8).text(prose(wordsPerPage, p + 1), { lineBreak: true });
  }
  doc.end();
  await done;
  return Buffer.concat(parts);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(principal: Principal, filename: string, bytes: Buffer) {
  const record = await createDocument(principal, { filename, description: "", tags: [] });
  await uploadDocumentFile(principal, record.id, {
    body: new Blob([new Uint8Array(bytes)]).stream(),
    declaredType: "application/octet-stream",
    declaredLength: bytes.length,
  });
  // A server keeps its calculator warm between documents; its start is reported, not timed with a run.
  const db = await getDb();
  if (db.kind === "pglite") {
    const started = performance.now();
    await embeddedTsvectorWorker().warm();
    console.log(`  tsvector calculator (embedded) started in ${((performance.now() - started) / 1000).toFixed(1)} s (the first start in a data folder also writes its start-up dump)`);
  }
  const index = async (calculator?: null) => {
    const runs: { totalMs: number; cpuS: number | null; timings: IndexTimings }[] = [];
    for (let r = 0; r < RUNS; r++) {
      const timings = emptyIndexTimings();
      const cpuBefore = cpuSeconds(db.kind === "postgres");
      const started = performance.now();
      await indexDocument(principal, record.id, { timings, tsvectorCalculator: calculator });
      const totalMs = performance.now() - started;
      const cpuAfter = cpuSeconds(db.kind === "postgres");
      runs.push({ totalMs, cpuS: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore, timings });
    }
    return runs;
  };
  // Same-run baseline: the database computes every tsvector while it stores (as the generated column did).
  const databaseRuns = await index(null);
  const runs = await index();
  console.log(`  runs: ${runs.map((r) => `${(r.totalMs / 1000).toFixed(2)} s (tsvector of ${r.timings.tsvSupplied}/${r.timings.chunks} chunks from the calculator)`).join(", ")}`);
  const medianRun = (of: typeof runs) => of.find((r) => r.totalMs === median(of.map((x) => x.totalMs)))!;
  const run = medianRun(runs);
  const databaseRun = medianRun(databaseRuns);

  // Baseline: the embedder alone on the same chunk texts.
  const { chunks } = await extractAndChunk(new Uint8Array(bytes), record.extension);
  const texts = chunks.map((c) => c.text);
  const embedder = getEmbedder();
  const baselineMs: number[] = [];
  let vectors: number[][] = [];
  for (let r = 0; r < RUNS; r++) {
    const started = performance.now();
    vectors = await embedder.embedDocuments(texts);
    baselineMs.push(performance.now() - started);
  }

  // Baseline for the store step: a bare binary COPY of the same rows into document_chunks (as the owner, one
  // transaction, same indexes), and the previous store, a multi-row INSERT with vectors as text, 64 per statement.
  const rows = chunks.map((c, i) => ({
    orgId: principal.orgId, documentId: record.id, generation: 0, ordinal: c.ordinal, text: c.text, wordStart: c.wordStart, wordEnd: c.wordEnd,
    pageStart: c.pageStart, pageEnd: c.pageEnd, rowStart: c.rowStart, rowEnd: c.rowEnd, model: embedder.model, embedding: vectors[i],
  }));
  // The same tsvectors the store received, from the same calculator.
  const calculator = tsvectorCalculator(db);
  let started = performance.now();
  const tsv: Uint8Array[] = [];
  const scope = randomUUID();
  for (let from = 0; from < rows.length; from += INDEX_BATCH_CHUNKS) {
    const batch = await calculator?.compute(rows.slice(from, from + INDEX_BATCH_CHUNKS).map((r) => r.text), scope);
    if (!batch) throw new Error("the tsvector calculator is not available");
    tsv.push(...batch);
  }
  const calculatorMs = performance.now() - started;
  const copyMs: number[] = [];
  const copyAllMs: number[] = [];
  const copyComputingMs: number[] = [];
  const textMs: number[] = [];
  // As many tsvectors supplied as the store received (which ones differs: store-schedule.ts; the count sets the cost).
  const supplied = run.timings.tsvSupplied;
  const bareCopy = async (generation: number, withTsv: number) => {
    const writer = new ChunkCopyWriter();
    rows.forEach((row, i) => writer.add({ ...row, generation, tsv: i >= rows.length - withTsv ? tsv[i] : null }));
    const data = writer.finish();
    const began = performance.now();
    await withRawTransaction(db, async (tx) => {
      if (!tx.copyBinary) throw new Error("this database connection cannot COPY");
      await tx.copyBinary(`document_chunks (${CHUNK_COPY_COLUMNS.join(", ")})`, data);
    });
    return performance.now() - began;
  };
  // The store path alone: the same document indexed with every tsvector at hand at once (the calculator's, computed
  // above), so no calculator shares the cores and the store takes whole batches; each run right after a bare COPY
  // with every tsvector, so the two meet the table (its size, its dead rows: PGlite has no autovacuum) in one state.
  const tsvOf = new Map(rows.map((row, i) => [row.text, tsv[i]]));
  const atHand: TsvectorCalculator = { compute: async (texts) => texts.map((text) => tsvOf.get(text)!) };
  const storeAloneMs: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const generation = 10_000 + 10 * r;
    copyMs.push(await bareCopy(generation, supplied));
    copyAllMs.push(await bareCopy(generation + 1, rows.length));
    const timings = emptyIndexTimings();
    await indexDocument(principal, record.id, { timings, tsvectorCalculator: atHand });
    storeAloneMs.push(timings.storeBusyMs);
    copyComputingMs.push(await bareCopy(generation + 3, 0));
    started = performance.now();
    for (let from = 0; from < rows.length; from += 64) {
      const params: unknown[] = [];
      const tuples = rows.slice(from, from + 64).map((row) => {
        const values = [row.orgId, row.documentId, generation + 2, row.ordinal, row.text, row.wordStart, row.wordEnd, row.pageStart, row.pageEnd, row.rowStart, row.rowEnd, row.model, row.embedding.length, vectorLiteral(row.embedding)];
        const at = params.length;
        params.push(...values);
        return `(${values.map((_, i) => `$${at + i + 1}${i === values.length - 1 ? "::vector" : ""}`).join(", ")})`;
      });
      await withRawTransaction(db, (tx) => tx.exec(`INSERT INTO document_chunks (${CHUNK_COPY_COLUMNS.filter((c) => c !== "tsv").join(", ")}) VALUES ${tuples.join(", ")}`, params));
    }
    textMs.push(performance.now() - started);
    await db.system.query("DELETE FROM document_chunks WHERE document_id = $1 AND generation >= 10000", [record.id]);
  }
  const parity = await db.system.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM document_chunks WHERE document_id = $1 AND tsv IS DISTINCT FROM to_tsvector('english'::regconfig, text)",
    [record.id],
  );

  const t = run.timings;
  const share = (ms: number) => `${((100 * ms) / run.totalMs).toFixed(0)}%`;
  const other = run.totalMs - t.readMs - t.extractMs - t.firstEmbedMs - t.storeMs;
  const rate = (chunks: number, ms: number) => Math.round(chunks / (ms / 1000));
  const endToEnd = rate(t.chunks, run.totalMs);
  const databaseEndToEnd = rate(t.chunks, databaseRun.totalMs);
  const embedOnly = t.words / (median(baselineMs) / 1000);
  console.log(`\n${filename}: ${(bytes.length / 1024).toFixed(0)} KiB, ${t.words} words, ${t.chunks} chunks; median of ${RUNS} runs`);
  console.log(
    `  end to end          : ${(run.totalMs / 1000).toFixed(2)} s, ${Math.round(t.words / (run.totalMs / 1000)).toLocaleString("en")} words/s, ${endToEnd} chunks/s ` +
      `(${(endToEnd / ISSUE_BASELINE_CHUNKS_PER_S).toFixed(2)}x the ${ISSUE_BASELINE_CHUNKS_PER_S} chunks/s of issue 15; aim >= 3x)`,
  );
  console.log(
    `  same, database computes every tsvector: ${(databaseRun.totalMs / 1000).toFixed(2)} s, ${databaseEndToEnd} chunks/s; ` +
      `with the calculator ${(endToEnd / databaseEndToEnd).toFixed(2)}x of it`,
  );
  if (run.cpuS !== null) {
    const bound = rate(t.chunks, (1000 * run.cpuS) / cores());
    console.log(
      `  CPU of the run      : ${run.cpuS.toFixed(2)} s (this process with its threads and engine${db.kind === "postgres" ? ", and the PostgreSQL server's processes on this machine" : ""}), ` +
        `${(run.cpuS / (run.totalMs / 1000)).toFixed(2)} of ${cores()} cores busy on average; with all ${cores()} busy the same work would take ${((1000 * run.cpuS) / cores()).toFixed(0)} ms, ` +
        `${bound} chunks/s: the run reached ${((100 * endToEnd) / bound).toFixed(0)}% of that bound`,
    );
  }
  console.log(`  baseline (embed only): ${(median(baselineMs) / 1000).toFixed(2)} s, ${Math.round(embedOnly).toLocaleString("en")} words/s`);
  // The store's own time: with a transaction in flight (not waiting for the calculator or the embedding).
  const storeRate = rate(t.chunks, t.storeBusyMs);
  const copyRate = rate(t.chunks, median(copyMs));
  const copyComputingRate = rate(t.chunks, median(copyComputingMs));
  const copyAllRate = rate(t.chunks, median(copyAllMs));
  const textRate = rate(t.chunks, median(textMs));
  console.log(
    `  store step          : ${storeRate} chunks/s (while a store is in flight, ${Math.round((100 * t.storeBusyMs) / t.storeMs)}% of the store phase; binary COPY into a temporary table, INSERT … SELECT under RLS, in batches of ${UNIT_CHUNKS} to ${INDEX_BATCH_CHUNKS}${db.kind === "postgres" ? ", two at once" : ""}; ` +
      `tsvectors of ${t.tsvSupplied}/${t.chunks} chunks supplied, the rest computed by the database)`,
  );
  console.log(
    `  bare binary COPY    : ${copyRate} chunks/s (same rows, the same ${supplied} tsvectors supplied and the rest computed by the database, owner, one COPY); ` +
      `store runs at ${(storeRate / copyRate).toFixed(2)}x of it, sharing the cores with the calculator`,
  );
  const storeAloneRate = rate(t.chunks, median(storeAloneMs));
  console.log(
    `  store path alone    : ${storeAloneRate} chunks/s (every tsvector at hand, no calculator beside it, batches of ${INDEX_BATCH_CHUNKS}); ` +
      `${(storeAloneRate / copyAllRate).toFixed(2)}x of the bare COPY with every tsvector supplied (aim >= 0.8)`,
  );
  console.log(`  bare COPY, every tsvector supplied: ${copyAllRate} chunks/s; the database computing every one: ${copyComputingRate} chunks/s (what every store paid before)`);
  console.log(`  text INSERT (before): ${textRate} chunks/s (same rows, 64 per INSERT, vectors as text, database computing tsv); store runs at ${(storeRate / textRate).toFixed(2)}x of it`);
  console.log(`  calculator alone    : ${rate(t.chunks, calculatorMs)} chunks/s (the tsvectors of every chunk, one batch after another, off the write path); parity: ${parity[0].n} stored chunks differ from to_tsvector('english', text)`);
  console.log(
    `  phases: read ${share(t.readMs)}, extract and chunk ${share(t.extractMs)}, until the first store (embedding it) ${share(t.firstEmbedMs)}, ` +
      `store (DB; the later batches embedded meanwhile) ${share(t.storeMs)}, claim/progress/swap ${share(other)}`,
  );
}

export default async function bench(args: string[]): Promise<void> {
  const [wordArg, pageArg] = positional(args, ["--engine"]);
  const words = Number(wordArg ?? 200_000);
  const pages = Number(pageArg ?? 100);
  for (const engine of benchEngines(args)) {
    await withScratchDb(
      "indexing",
      async (db) => {
        const org = `org_bench_${process.pid}`;
        await db.system.query("INSERT INTO organizations (id, slug, name) VALUES ($1, $2, 'Bench')", [org, `bench-${process.pid}`]);
        const principal: Principal = { userId: "usr_bench", orgId: org, orgSlug: `bench-${process.pid}`, orgName: "Bench", role: "admin", locationIds: null, via: "bearer" };
        const embedder = getEmbedder();
        console.log(`\nindexing bench: ${embedder.provider} embedder ${embedder.model} (${embedder.dims} dims), ${db.kind === "pglite" ? "PGlite" : "PostgreSQL"}, 500-word chunks with 50 overlap`);
        try {
          await measure(principal, "prose.txt", Buffer.from(prose(words), "utf8"));
          // 0 pages skips the PDF (a PDF without pages has no text, which indexing rightly refuses).
          if (pages > 0) await measure(principal, "manual.pdf", await pdfOf(pages, 400));
        } finally {
          // On a PostgreSQL server the bench's organization goes again (cascades to documents and chunks).
          if (db.kind === "postgres") await db.system.query("DELETE FROM organizations WHERE id = $1", [org]);
        }
      },
      engine,
    );
  }
}
