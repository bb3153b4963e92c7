// Fault: a 150 KB PDF whose deflated content stream holds 100 MiB of text operators. pdfjs works
// through every one of them (about 35 s of CPU on this machine), the shape of an extractor
// "loop". It runs off the request thread (pdftotext child or pdfjs worker): it is stopped at its time limit, the server answers
// meanwhile, and the next PDF is read. (A PDF that makes pdfjs run out of heap was not found:
// pdfjs keeps little per operator; this one runs within a 128 MB heap.)
import { describe, expect, it } from "vitest";
import { pdfTextBomb, pdfWithPages } from "@/lib/documents/extract/fixtures/generate";
import { reasonOf } from "@/test/support/reason-of";
import { extractPdf } from "@/lib/documents/extract/pdf";
import { paced } from "@/test/machine-pace";
import { PACE, QUICK_MS, probeWhile } from "./probe";

describe("fault: a PDF that keeps the extractor busy", () => {
  // pdftotext (a bounded child process) where installed, else pdfjs in a worker thread; pdfjs always.
  it.each(["auto", "pdfjs"] as const)("is stopped at the PDF time limit while other requests are answered; the next PDF is read (engine %s)", async (engine) => {
    const bomb = pdfTextBomb(100);
    expect(bomb.length).toBeLessThan(300 * 1024);
    // Well under the bomb's cost on a quiet machine: pdftotext reads it in 2.4-2.5 s there (it did within a 3 s limit once).
    const limits = { maxPages: 10, timeoutMs: 1_000, maxHeapMb: 128 };
    const report = await probeWhile(() => reasonOf(extractPdf(bomb, undefined, limits, engine)));
    expect(report.outcome).toBe("Reading the PDF took longer than 1 s and was stopped");
    // The limit, then up to 5 s (on a quiet machine) to stop the reader and answer.
    expect(report.faultMs).toBeLessThan(1_000 + paced(5_000, PACE));
    expect(report.probeStatuses.every((s) => s === 200)).toBe(true);
    // Answers kept coming while the bomb ran: a blocked event loop lets one probe through (the bomb's
    // second passes before it is answered). More than one is all a loaded machine promises: at load 15 a
    // probe took 500 ms, and a one-second fault held two (soak round 2).
    expect(report.probeMs.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...report.probeMs)).toBeLessThan(QUICK_MS);
    // The extractor is not left poisoned; a time limit of its own, so a loaded machine cannot cut this one too.
    const next = await extractPdf(await pdfWithPages(1, () => "Quarterly revenue grew."), undefined, { ...limits, timeoutMs: paced(15_000, PACE) }, engine);
    expect(next.segments[0].text).toContain("Quarterly revenue grew.");
  }, paced(60_000, PACE));
});
