// npm run bench -- extraction [pages]: PDF text extraction by extractPdf with each engine (pdftotext as a
// child process, pdfjs-dist in a worker thread) and by PDFium (WebAssembly, @embedpdf/pdfium, a candidate
// benchmarked only, on this thread) beside bare `pdftotext` on the same file in the same run, with fidelity
// (pages whose words equal pdftotext's) and memory, on a generated PDF and on real pdfTeX output when
// present; docx, csv and chunking throughput.
import { execFile } from "node:child_process";
import fsSync from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { chunkDocument } from "@/lib/documents/extract/chunk";
import { docxWithParagraphs, pdfWithPages, prose } from "@/lib/documents/extract/fixtures/generate";
import { DEFAULT_PDF_LIMITS, extractPdf, type PdfEngine } from "@/lib/documents/extract/pdf";
import { extractPlainText } from "@/lib/documents/extract/plain";
import { withoutControlCharacters } from "@/lib/documents/extract/text-encoding";
import { loadPdfium, pdfiumPages } from "./lib/pdfium-text";

const run = promisify(execFile);
const PDFTOTEXT = "/usr/bin/pdftotext";
const WORDS_PER_PAGE = 450;
const DOCX_PARAGRAPHS = 2000;
const WORDS_PER_PARAGRAPH = 100;
const RUNS = 3;
/** Real pdfTeX output from Debian documentation packages (libtasn1-doc, shared-mime-info), when installed. */
const REAL_PDFS = ["/usr/share/doc/libtasn1-doc/libtasn1.pdf", "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"];

const wordsOf = (text: string) => withoutControlCharacters(text).split(/\s+/).filter(Boolean);

async function producer(file: string): Promise<string> {
  const { stdout } = await run("/usr/bin/pdfinfo", [file]).catch(() => ({ stdout: "" }));
  return /^Producer:\s*(.*)$/m.exec(stdout)?.[1] ?? "unknown producer";
}

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

/** Peak resident memory of this process above where it stood before `measure` (worker threads count, child processes not). */
async function peakRssGrowth(measure: () => Promise<void>): Promise<number> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  try {
    await measure();
  } finally {
    clearInterval(sampler);
  }
  return Math.max(peak, process.memoryUsage.rss()) - before;
}

/** Peak resident memory of one bare pdftotext process, from GNU time, when installed. */
async function pdftotextMaxRss(file: string): Promise<number | null> {
  if (!fsSync.existsSync("/usr/bin/time")) return null;
  const { stderr } = await run("/usr/bin/time", ["-f", "%M", PDFTOTEXT, "-enc", "UTF-8", file, "/dev/null"]);
  const kib = Number(stderr.trim().split("\n").at(-1));
  return Number.isFinite(kib) ? kib * 1024 : null;
}

const mib = (bytes: number | null) => (bytes === null ? "n/a" : `${(bytes / 1024 / 1024).toFixed(0)} MiB`);

const rate = (count: number, ms: number) => Math.round(count / (ms / 1000)).toLocaleString("en-US");

export default async function bench(args: string[]): Promise<void> {
  const pages = Number(args[0] ?? 150);
  if (!Number.isInteger(pages) || pages < 100) throw new Error("pages must be an integer of at least 100");
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "quarry-bench-extraction-"));
  try {
    const pdf = await pdfWithPages(pages, (page) => `Page ${page}. ${prose(WORDS_PER_PAGE, page)}`);
    const file = path.join(dir, "bench.pdf");
    await fs.writeFile(file, pdf);

    const real = REAL_PDFS.filter((f) => fsSync.existsSync(f));
    const files = [{ name: `generated (pdfkit), ${pages} pages`, file, bytes: pdf }];
    for (const f of real) files.push({ name: `${path.basename(f)} (${await producer(f)})`, file: f, bytes: await fs.readFile(f) });
    for (const { name, file: onDisk, bytes } of files) {
      let popplerPages: string[] = [];
      const popplerMs = await median(RUNS, async () => {
        const { stdout } = await run(PDFTOTEXT, ["-enc", "UTF-8", onDisk, "-"], { maxBuffer: 256 * 1024 * 1024 });
        popplerPages = stdout.split("\f").slice(0, -1);
      });
      const engines: { label: string; engine: PdfEngine }[] = [
        { label: "extractPdf, pdftotext (child)", engine: "pdftotext" },
        { label: "extractPdf, pdfjs (worker)   ", engine: "pdfjs" },
      ];
      console.log(`pdf: ${name}, ${(bytes.length / 1024).toFixed(0)} KiB, ${popplerPages.length} pages, median of ${RUNS} runs`);
      console.log(
        `  pdftotext bare (baseline)    : ${popplerMs.toFixed(0).padStart(5)} ms  ${rate(popplerPages.length, popplerMs)} pages/s  ` +
          `(${wordsOf(popplerPages.join(" ")).length.toLocaleString("en-US")} words)  peak RSS of the process ${mib(await pdftotextMaxRss(onDisk))}`,
      );
      // Fidelity against pdftotext: the same words, page by page.
      // Also the same words in any order, which tells reading-order differences from lost or changed words.
      const sorted = (text: string) => (text ? text.split(" ").sort().join(" ") : "");
      const report = (label: string, ms: number, pageTexts: Map<number, string>, memory: string) => {
        let samePages = 0;
        let sameWordSets = 0;
        popplerPages.forEach((text, i) => {
          const reference = wordsOf(text).join(" ");
          const page = pageTexts.get(i + 1) ?? "";
          if (page === reference) samePages++;
          if (sorted(page) === sorted(reference)) sameWordSets++;
        });
        const words = [...pageTexts.values()].reduce((n, text) => n + (text ? text.split(" ").length : 0), 0);
        console.log(
          `  ${label}: ${ms.toFixed(0).padStart(5)} ms  ${rate(popplerPages.length, ms)} pages/s  (${words.toLocaleString("en-US")} words)  ` +
            `x${(ms / popplerMs).toFixed(2)} pdftotext's time (aim <= 1.7); pages with words identical to pdftotext ${samePages}/${popplerPages.length} ` +
            `(in any order ${sameWordSets}/${popplerPages.length}); ${memory}`,
        );
      };
      for (const { label, engine } of engines) {
        let result: Awaited<ReturnType<typeof extractPdf>> | undefined;
        // Memory from the first (untimed, warm-up) run, the only one that shows what the engine takes on.
        let growth = 0;
        let first = true;
        const ms = await median(RUNS, async () => {
          if (!first) return void (result = await extractPdf(bytes, undefined, DEFAULT_PDF_LIMITS, engine));
          first = false;
          growth = await peakRssGrowth(async () => void (result = await extractPdf(bytes, undefined, DEFAULT_PDF_LIMITS, engine)));
        });
        const memory = engine === "pdfjs" ? `peak RSS growth on the first run ${mib(growth)} (worker thread)` : "memory in the child, as bare pdftotext";
        report(label, ms, new Map(result!.segments.map((segment) => [segment.page ?? 0, wordsOf(segment.text).join(" ")])), memory);
      }
      await loadPdfium(); // compiling the module once, outside the timed runs, as a long-lived worker would
      let pdfium: Awaited<ReturnType<typeof pdfiumPages>> | undefined;
      const pdfiumMs = await median(RUNS, async () => {
        pdfium = await pdfiumPages(bytes);
      });
      report(
        "PDFium wasm (this thread)    ",
        pdfiumMs,
        new Map(pdfium!.pages.map((text, i) => [i + 1, wordsOf(text).join(" ")])),
        `WebAssembly heap ${mib(pdfium!.heapBytes)}`,
      );
    }

    const docx = await docxWithParagraphs(Array.from({ length: DOCX_PARAGRAPHS }, (_, i) => prose(WORDS_PER_PARAGRAPH, i)));
    let docxWords = 0;
    const docxMs = await median(RUNS, async () => {
      docxWords = (await extractPlainText(docx, "docx")).wordCount;
    });
    console.log(`docx: ${docxWords.toLocaleString("en-US")} words, ${(docx.length / 1024).toFixed(0)} KiB: ${docxMs.toFixed(0)} ms  ${rate(docxWords, docxMs)} words/s (mammoth, incl. zip checks)`);

    const csvLines = ["order,region,amount,note"];
    for (let i = 0; i < 200_000; i++) csvLines.push(`${i},North,${i * 3}.50,"said ""ok"", then left"`);
    const csv = Buffer.from(csvLines.join("\n"));
    let rows = 0;
    const csvMs = await median(RUNS, async () => {
      rows = (await extractPlainText(csv, "csv")).rowCount ?? 0;
    });
    console.log(`csv: ${rows.toLocaleString("en-US")} rows, ${(csv.length / 1024 / 1024).toFixed(1)} MiB: ${csvMs.toFixed(0)} ms  ${rate(rows, csvMs)} rows/s`);

    const text = Buffer.from(prose(2_000_000));
    const extracted = await extractPlainText(text, "txt");
    let chunks = 0;
    const chunkMs = await median(RUNS, async () => {
      chunks = chunkDocument(extracted).length;
    });
    console.log(`chunking: ${extracted.wordCount.toLocaleString("en-US")} words into ${chunks.toLocaleString("en-US")} chunks: ${chunkMs.toFixed(0)} ms  ${rate(extracted.wordCount, chunkMs)} words/s`);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
