// npm run bench -- extraction [pages]: text extraction of a generated PDF by extractText (pdfjs-dist in a
// worker thread) beside poppler's `pdftotext` on the same file in the same run; docx, csv and chunking throughput.
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { chunkDocument } from "@/lib/documents/chunk";
import { docxWithParagraphs, pdfWithPages, prose } from "@/lib/documents/extract/fixtures/generate";
import { extractText } from "@/lib/documents/extract/index";

const run = promisify(execFile);
const PDFTOTEXT = "/usr/bin/pdftotext";
const WORDS_PER_PAGE = 450;
const DOCX_PARAGRAPHS = 2000;
const WORDS_PER_PARAGRAPH = 100;
const RUNS = 3;

async function median(runs: number, measure: () => Promise<void>): Promise<number> {
  await measure(); // warm-up: module loading, JIT, page cache
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await measure();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

const rate = (count: number, ms: number) => Math.round(count / (ms / 1000)).toLocaleString("en-US");

export default async function bench(args: string[]): Promise<void> {
  const pages = Number(args[0] ?? 150);
  if (!Number.isInteger(pages) || pages < 100) throw new Error("pages must be an integer of at least 100");
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "quarry-bench-extraction-"));
  try {
    const pdf = await pdfWithPages(pages, (page) => `Page ${page}. ${prose(WORDS_PER_PAGE, page)}`);
    const file = path.join(dir, "bench.pdf");
    await fs.writeFile(file, pdf);

    let ours = 0;
    let poppler = 0;
    const oursMs = await median(RUNS, async () => {
      ours = (await extractText(pdf, "pdf")).wordCount;
    });
    const popplerMs = await median(RUNS, async () => {
      const { stdout } = await run(PDFTOTEXT, ["-enc", "UTF-8", file, "-"], { maxBuffer: 256 * 1024 * 1024 });
      poppler = stdout.split(/\s+/).filter(Boolean).length;
    });
    console.log(`pdf: ${pages} pages, ${(pdf.length / 1024).toFixed(0)} KiB, median of ${RUNS} runs`);
    console.log(`  pdftotext (poppler, process)  : ${popplerMs.toFixed(0)} ms  ${rate(pages, popplerMs)} pages/s  (${poppler.toLocaleString("en-US")} words)`);
    console.log(`  extractText (pdfjs, worker)   : ${oursMs.toFixed(0)} ms  ${rate(pages, oursMs)} pages/s  (${ours.toLocaleString("en-US")} words)`);
    console.log(`  ratio: extractText takes ${(oursMs / popplerMs).toFixed(2)}x pdftotext's time`);

    const docx = await docxWithParagraphs(Array.from({ length: DOCX_PARAGRAPHS }, (_, i) => prose(WORDS_PER_PARAGRAPH, i)));
    let docxWords = 0;
    const docxMs = await median(RUNS, async () => {
      docxWords = (await extractText(docx, "docx")).wordCount;
    });
    console.log(`docx: ${docxWords.toLocaleString("en-US")} words, ${(docx.length / 1024).toFixed(0)} KiB: ${docxMs.toFixed(0)} ms  ${rate(docxWords, docxMs)} words/s (mammoth, incl. zip checks)`);

    const csvLines = ["order,region,amount,note"];
    for (let i = 0; i < 200_000; i++) csvLines.push(`${i},North,${i * 3}.50,"said ""ok"", then left"`);
    const csv = Buffer.from(csvLines.join("\n"));
    let rows = 0;
    const csvMs = await median(RUNS, async () => {
      rows = (await extractText(csv, "csv")).rowCount ?? 0;
    });
    console.log(`csv: ${rows.toLocaleString("en-US")} rows, ${(csv.length / 1024 / 1024).toFixed(1)} MiB: ${csvMs.toFixed(0)} ms  ${rate(rows, csvMs)} rows/s`);

    const text = Buffer.from(prose(2_000_000));
    const extracted = await extractText(text, "txt");
    let chunks = 0;
    const chunkMs = await median(RUNS, async () => {
      chunks = chunkDocument(extracted).length;
    });
    console.log(`chunking: ${extracted.wordCount.toLocaleString("en-US")} words into ${chunks.toLocaleString("en-US")} chunks: ${chunkMs.toFixed(0)} ms  ${rate(extracted.wordCount, chunkMs)} words/s`);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
