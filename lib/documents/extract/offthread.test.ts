import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { DEFAULT_EXTRACTION_LIMITS } from "@/lib/config/extraction";
import { chunkDocument } from "./chunk";
import { readZipDirectory } from "../zip-directory";
import { docxWithParagraphs, paragraphBombDocx, pdfWithPages, prose } from "./fixtures/generate";
import { reasonOf } from "@/test/support/reason-of";
import { extractAndChunk, extractionWorkers } from "./offthread-client";
import { extractPdf } from "./pdf";
import { countExtractedWords, extractPlainText } from "./plain";

/** How many times a 10 ms timer fired while `work` ran: the event loop's responsiveness. */
async function ticksDuring(work: () => Promise<unknown>): Promise<{ ticks: number; ms: number; outcome: unknown }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const started = performance.now();
  const outcome = await work().catch((error: unknown) => error);
  clearInterval(timer);
  return { ticks, ms: performance.now() - started, outcome };
}

describe("extraction and chunking in the extraction worker", () => {
  it("gives the chunks the same code gives on the calling thread, for every type", async () => {
    const files = {
      docx: await docxWithParagraphs(["Shipping policy", prose(900), "Zürich office"]),
      txt: iconv.encode(prose(1300, 3), "windows-1252"),
      csv: Buffer.from(`region,amount,note\n${Array.from({ length: 400 }, (_, i) => `North ${i},${i * 3},${prose(5, i)}`).join("\n")}\n`),
      pdf: await pdfWithPages(3, (page) => `Page ${page}. ${prose(300, page)}`),
    } as const;
    for (const [extension, bytes] of Object.entries(files) as [keyof typeof files, Buffer][]) {
      // On this thread: the PDF workers' text counted, or the other formats read, by the functions the worker runs.
      const local = extension === "pdf" ? await countExtractedWords(await extractPdf(bytes, undefined), "pdf") : await extractPlainText(bytes, extension);
      const outcome = await extractAndChunk(bytes, extension);
      expect(outcome.chunks, extension).toEqual(chunkDocument(local));
      expect(outcome.wordCount, extension).toBe(local.wordCount);
      expect(outcome.pageCount, extension).toBe(local.pageCount);
      expect(outcome.rowCount, extension).toBe(local.rowCount);
    }
    // The caller's buffer is still usable after its copy was transferred.
    expect(files.txt.length).toBeGreaterThan(0);
    expect(extractionWorkers.stats().spawned).toBeGreaterThan(0);
  });

  it("refuses a Word document whose word/document.xml is over the limit, from the ZIP directory", async () => {
    const bomb = await paragraphBombDocx(8 * 1024 * 1024);
    const directory = readZipDirectory(bomb, bomb.length);
    if (!directory.ok) throw new Error(directory.reason);
    const xml = directory.entries.find((e) => e.name === "word/document.xml")!;
    // The shape of the bomb: a ratio under 10, so only the size cap stops it.
    expect(xml.uncompressedSize / xml.compressedSize).toBeLessThan(10);
    const limits = { ...DEFAULT_EXTRACTION_LIMITS, maxDocxXmlBytes: 4 * 1024 * 1024 };
    expect(await reasonOf(extractAndChunk(bomb, "docx", { limits }))).toMatch(/^The Word document's text part \(word\/document.xml\) expands to 8 MiB; at most 4 MiB are accepted$/);
  });

  it("refuses more text than the limit", async () => {
    const limits = { ...DEFAULT_EXTRACTION_LIMITS, maxTextChars: 10_000 };
    expect(await reasonOf(extractAndChunk(Buffer.from(prose(5_000)), "txt", { limits }))).toMatch(/^The document holds [\d,]+ characters of text; at most 10,000 can be indexed$/);
  });

  it("stops a worker past its heap limit; the file fails alone and the next one is read", async () => {
    // Under the XML cap (raised here), mammoth's tree of 40 MiB of paragraphs still needs far more than 96 MB.
    const bomb = await paragraphBombDocx(40 * 1024 * 1024);
    const limits = { ...DEFAULT_EXTRACTION_LIMITS, maxDocxXmlBytes: 1024 * 1024 * 1024, maxHeapMb: 96 };
    const { ticks, ms, outcome } = await ticksDuring(() => extractAndChunk(bomb, "docx", { limits }));
    expect((outcome as Error).message).toBe("Reading the file needed more than 96 MB of memory and was stopped");
    // The event loop kept turning meanwhile (a 10 ms timer, at least a third of its ticks).
    expect(ticks).toBeGreaterThan(ms / 10 / 3);
    expect((await extractAndChunk(Buffer.from("still working"), "txt")).wordCount).toBe(2);
  });

  it("stops a worker past its time limit", async () => {
    const limits = { ...DEFAULT_EXTRACTION_LIMITS, timeoutMs: 50 };
    const csv = Buffer.from(`a,b\n${"1,2\n".repeat(2_000_000)}`);
    expect(await reasonOf(extractAndChunk(csv, "csv", { limits }))).toBe("Reading the file took longer than 0 s and was stopped");
    expect((await extractAndChunk(Buffer.from("next file"), "txt")).wordCount).toBe(2);
  });
});
