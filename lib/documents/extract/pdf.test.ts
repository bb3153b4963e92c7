import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { pdfWithPages, prose, scannedPdf } from "./fixtures/generate";
import { reasonOf } from "@/test/support/reason-of";
import { DEFAULT_PDF_LIMITS, extractPdf, findPdftotext, pdfWorkers } from "./pdf";
import { countExtractedWords } from "./plain";
import { ExtractionError } from "./types";
import { measurePace, paced } from "@/test/machine-pace";

/** A PDF as indexing reads it: its text from the PDF workers, then counted (and refused without any) in the extraction worker's step. */
const readPdf = async (bytes: Uint8Array, signal?: AbortSignal) => countExtractedWords(await extractPdf(bytes, signal), "pdf", { signal });
const words = (segments: { text: string }[]) => segments.flatMap((s) => s.text.split(/\s+/).filter(Boolean));

describe("pdf extraction", () => {
  it("keeps page numbers, skips pages without text and counts words", async () => {
    const pdf = await pdfWithPages(4, (page) => (page === 3 ? " " : `Page ${page} says: ${prose(40, page)}`));
    const doc = await readPdf(pdf);
    expect(doc.pageCount).toBe(4);
    expect(doc.segments.map((s) => s.page)).toEqual([1, 2, 4]);
    expect(doc.segments[1].text).toContain("Page 2 says:");
    expect(doc.segments[2].text.replace(/\s+/g, " ").trim()).toBe(`Page 4 says: ${prose(40, 4)}`);
    expect(doc.wordCount).toBe(3 * 43);
    expect(pdf.length).toBeGreaterThan(0); // the caller's buffer is copied, not transferred away
  });

  it("turns control characters in a page's text into spaces (pdfjs)", async () => {
    // pdfkit draws a tab in a standard font as glyphs pdfjs reads back as control characters.
    const doc = await extractPdf(await pdfWithPages(1, () => "before\tafter"), undefined, DEFAULT_PDF_LIMITS, "pdfjs");
    expect(doc.segments[0].text).not.toMatch(/[\u0000-\u0008\u000e-\u001f]/);
    expect(words(doc.segments)).toHaveLength(2);
  });

  it.skipIf(!findPdftotext())("reads through pdftotext when installed: the same words on the same pages as pdfjs", async () => {
    const pdf = await pdfWithPages(5, (page) => (page === 2 ? " " : `Page ${page} says: ${prose(120, page)}`));
    const poppler = await extractPdf(pdf, undefined, DEFAULT_PDF_LIMITS, "pdftotext");
    const pdfjs = await extractPdf(pdf, undefined, DEFAULT_PDF_LIMITS, "pdfjs");
    expect(poppler.pageCount).toBe(5);
    expect(poppler.segments.map((s) => s.page)).toEqual([1, 3, 4, 5]);
    expect(poppler.segments.map((s) => s.page)).toEqual(pdfjs.segments.map((s) => s.page));
    for (let i = 0; i < poppler.segments.length; i++) expect(words([poppler.segments[i]])).toEqual(words([pdfjs.segments[i]]));
    // pdfkit's tab glyph: pdftotext leaves no control character either.
    const tab = await extractPdf(await pdfWithPages(1, () => "before\tafter"), undefined, DEFAULT_PDF_LIMITS, "pdftotext");
    expect(tab.segments[0].text).not.toMatch(/[\u0000-\u0008\u000e-\u001f]/);
  });

  it.skipIf(!findPdftotext())("pdftotext: refuses too many pages and stops at the time cap", async () => {
    const pdf = await pdfWithPages(3, (page) => prose(30, page));
    expect(await reasonOf(extractPdf(pdf, undefined, { ...DEFAULT_PDF_LIMITS, maxPages: 2 }, "pdftotext"))).toBe("The PDF has 3 pages; at most 2 can be indexed");
    const longer = await pdfWithPages(150, (page) => prose(300, page));
    expect(await reasonOf(extractPdf(longer, undefined, { ...DEFAULT_PDF_LIMITS, timeoutMs: 5 }, "pdftotext"))).toMatch(/took longer than 0 s and was stopped/);
  });

  it("refuses a scanned PDF (images only) as having no text layer", async () => {
    expect(await reasonOf(readPdf(await scannedPdf()))).toMatch(/no text layer.*OCR is not supported/);
  });

  it("refuses a password-protected PDF and reads one that only restricts permissions", async () => {
    const locked = await pdfWithPages(1, () => "secret figures", { userPassword: "open sesame", ownerPassword: "owner" });
    expect(await reasonOf(readPdf(locked))).toMatch(/encrypted with a password/);
    const restricted = await pdfWithPages(1, () => "public figures", { ownerPassword: "owner", permissions: { copying: false } });
    expect((await readPdf(restricted)).segments[0].text).toContain("public figures");
  });

  it("refuses corrupt PDFs with a reason, never another error", async () => {
    expect(await reasonOf(readPdf(Buffer.from("%PDF-1.7\nthis is not really a pdf\n%%EOF")))).toMatch(/corrupt or not a PDF/);
    expect(await reasonOf(readPdf(Buffer.from("hello")))).toMatch(/corrupt or not a PDF/);
    const real = await pdfWithPages(3, (page) => prose(200, page));
    for (const cut of [0.1, 0.5, 0.9]) {
      // pdfjs may rebuild a truncated file's cross-reference table and recover some pages.
      const outcome = await readPdf(real.subarray(0, Math.floor(real.length * cut))).catch((e: unknown) => e as Error);
      if (outcome instanceof Error) expect(outcome).toBeInstanceOf(ExtractionError);
      else expect(outcome.wordCount).toBeGreaterThan(0);
    }
  });

  it("refuses more pages than the cap and stops at the time cap", async () => {
    const pdf = await pdfWithPages(3, (page) => prose(30, page));
    expect(await reasonOf(extractPdf(pdf, undefined, { ...DEFAULT_PDF_LIMITS, maxPages: 2 }))).toBe("The PDF has 3 pages; at most 2 can be indexed");
    const longer = await pdfWithPages(40, (page) => prose(300, page));
    expect(await reasonOf(extractPdf(longer, undefined, { ...DEFAULT_PDF_LIMITS, timeoutMs: 5 }))).toMatch(/took longer than 0 s and was stopped/);
  });

  it("stops a worker that runs out of its heap and reports it", async () => {
    const pdf = await pdfWithPages(3, (page) => prose(30, page));
    expect(await reasonOf(extractPdf(pdf, undefined, { ...DEFAULT_PDF_LIMITS, maxHeapMb: 2 }, "pdfjs"))).toMatch(/needed more than 2 MB of memory/);
  });

  it("honours the abort signal, terminating the worker and freeing its slot", async () => {
    const big = await pdfWithPages(150, (page) => prose(300, page));
    const already = new AbortController();
    already.abort(new Error("cancelled before start"));
    await expect(readPdf(big, already.signal)).rejects.toThrow("cancelled before start");

    const controllers = [new AbortController(), new AbortController(), new AbortController()];
    const bound = paced(2_000, measurePace());
    const started = performance.now();
    const runs = controllers.map((controller) => readPdf(big, controller.signal));
    // Aborted once every run is under way (started, or queued for a slot), one turn of the event loop later: no
    // engine can finish 150 pages by then (after 100 ms, pdftotext sometimes had, and the test failed on a fast run).
    setImmediate(() => controllers.forEach((c) => c.abort(new DOMException("stopped", "AbortError"))));
    for (const run of runs) await expect(run).rejects.toThrow("stopped");
    expect(performance.now() - started).toBeLessThan(bound);

    // Both worker slots are free again: further extractions run to completion.
    const small = await pdfWithPages(2, (page) => prose(20, page));
    const results = await Promise.all([1, 2, 3].map(() => readPdf(small)));
    expect(results.map((r) => r.wordCount)).toEqual([40, 40, 40]);
  });

  it("reuses a warm worker between PDFs and replaces one that was stopped", async () => {
    const small = await pdfWithPages(1, () => "warm worker");
    const viaWorker = (pdf: Uint8Array, limits = DEFAULT_PDF_LIMITS) => extractPdf(pdf, undefined, limits, "pdfjs");
    await viaWorker(small);
    const warm = pdfWorkers.stats();
    expect(warm.idle).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) expect(words((await viaWorker(small)).segments)).toHaveLength(2);
    expect(pdfWorkers.stats().spawned).toBe(warm.spawned);

    const longer = await pdfWithPages(40, (page) => prose(300, page));
    await reasonOf(viaWorker(longer, { ...DEFAULT_PDF_LIMITS, timeoutMs: 5 }));
    const idleAfterTimeout = warm.idle - 1;
    expect(pdfWorkers.stats().idle).toBe(idleAfterTimeout);
    // Two PDFs at once: the idle worker(s) are reused and only the missing ones are started.
    await Promise.all([viaWorker(small), viaWorker(small)]);
    expect(pdfWorkers.stats()).toEqual({ spawned: warm.spawned + (2 - idleAfterTimeout), idle: 2 });
  });

  it("parses off the calling thread: the event loop stays idle during a big PDF (pdfjs worker)", async () => {
    const big = await pdfWithPages(120, (page) => prose(400, page));
    const before = performance.eventLoopUtilization();
    // pdftotext is a child process, off the thread by construction; this checks the worker fallback.
    const doc = await extractPdf(big, undefined, DEFAULT_PDF_LIMITS, "pdfjs");
    const { utilization } = performance.eventLoopUtilization(before);
    expect(doc.pageCount).toBe(120);
    // Measured on this machine: pdfjs on the calling thread keeps the loop 55-80 % busy, the worker about 1 %.
    // Utilization counts time outside the event loop's idle wait, so a busy machine does not raise it.
    expect(utilization).toBeLessThan(0.2);
  });
});
