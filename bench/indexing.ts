// npm run bench -- indexing [txt words, default 200000] [pdf pages, default 100]: end-to-end indexing
// throughput with the local embedder (read the stored file, extract, chunk, embed, store the
// chunks in batches, swap the generation in), in words/s, with the share of each stage; beside the
// baseline of embedding the same chunk texts alone (the work no indexer can skip).
import PDFDocument from "pdfkit";
import type { Principal } from "@/lib/auth/roles";
import { chunkDocument } from "@/lib/documents/chunk";
import { createDocumentFor } from "@/lib/documents/documents";
import { extractText } from "@/lib/documents/extract/index";
import { indexDocument, type IndexTimings } from "@/lib/documents/index-document";
import { uploadDocumentFile } from "@/lib/documents/upload";
import { getEmbedder } from "@/lib/embeddings";
import { withScratchDb } from "./lib/scratch-db";

const RUNS = 3;

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
  const record = await createDocumentFor(principal, { filename, description: "", tags: [] });
  await uploadDocumentFile(principal, record.id, {
    body: new Blob([new Uint8Array(bytes)]).stream(),
    declaredType: "application/octet-stream",
    declaredLength: bytes.length,
  });
  const runs: { totalMs: number; timings: IndexTimings }[] = [];
  for (let r = 0; r < RUNS; r++) {
    const timings: IndexTimings = { readMs: 0, extractMs: 0, chunkMs: 0, embedMs: 0, storeMs: 0, words: 0, chunks: 0 };
    const started = performance.now();
    await indexDocument(principal, record.id, { timings });
    runs.push({ totalMs: performance.now() - started, timings });
  }
  const run = runs.find((r) => r.totalMs === median(runs.map((x) => x.totalMs)))!;

  // Baseline: the embedder alone on the same chunk texts.
  const extracted = await extractText(new Uint8Array(bytes), record.extension);
  const texts = chunkDocument(extracted).map((c) => c.text);
  const embedder = getEmbedder();
  const baselineMs: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const started = performance.now();
    await embedder.embedDocuments(texts);
    baselineMs.push(performance.now() - started);
  }

  const t = run.timings;
  const share = (ms: number) => `${((100 * ms) / run.totalMs).toFixed(0)}%`;
  const other = run.totalMs - t.readMs - t.extractMs - t.chunkMs - t.embedMs - t.storeMs;
  const endToEnd = t.words / (run.totalMs / 1000);
  const embedOnly = t.words / (median(baselineMs) / 1000);
  console.log(`\n${filename}: ${(bytes.length / 1024).toFixed(0)} KiB, ${t.words} words, ${t.chunks} chunks; median of ${RUNS} runs`);
  console.log(`  end to end          : ${(run.totalMs / 1000).toFixed(2)} s, ${Math.round(endToEnd).toLocaleString("en")} words/s, ${Math.round(t.chunks / (run.totalMs / 1000))} chunks/s`);
  console.log(`  baseline (embed only): ${(median(baselineMs) / 1000).toFixed(2)} s, ${Math.round(embedOnly).toLocaleString("en")} words/s; end to end runs at ${(endToEnd / embedOnly).toFixed(2)}x of it`);
  console.log(
    `  shares: read ${share(t.readMs)}, extract ${share(t.extractMs)}, chunk ${share(t.chunkMs)}, embed ${share(t.embedMs)}, ` +
      `store (DB) ${share(t.storeMs)}, claim/progress/swap ${share(other)}`,
  );
}

export default async function bench(args: string[]): Promise<void> {
  const words = Number(args[0] ?? 200_000);
  const pages = Number(args[1] ?? 100);
  await withScratchDb("indexing", async (db) => {
    await db.system.query("INSERT INTO organizations (id, slug, name) VALUES ('org_bench', 'bench', 'Bench')");
    const principal: Principal = { userId: "usr_bench", orgId: "org_bench", orgSlug: "bench", orgName: "Bench", role: "admin", locationIds: null, via: "bearer" };
    const embedder = getEmbedder();
    console.log(`indexing bench: ${embedder.provider} embedder ${embedder.model} (${embedder.dims} dims), PGlite, 500-word chunks with 50 overlap`);
    await measure(principal, "prose.txt", Buffer.from(prose(words), "utf8"));
    await measure(principal, "manual.pdf", await pdfOf(pages, 400));
  });
}
