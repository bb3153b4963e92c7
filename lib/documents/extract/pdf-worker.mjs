// Extracts the text of PDFs page by page with pdfjs-dist, inside a worker
// thread (pdfjs parses on the thread that calls it). The worker lives on
// between jobs because loading pdfjs costs far more than a small PDF.
//
// Plain JavaScript, loaded natively on purpose: lib/documents/extract/pdf.ts
// imports this file by its path with turbopackIgnore and calls
// `startPdfWorker`, which starts this same file as a worker. Turbopack would
// otherwise bundle any `new Worker(...)` it can follow, and a bundled worker
// cannot resolve pdfjs's data folders. So the code runs the same way under
// vitest, tsx and `next start`.
//
// In:  messages { bytes: Uint8Array, maxPages: number }, one job at a time
// Out: one message per job, { ok: true, pageCount, pages: string[] }
//      or { ok: false, kind: "password" | "invalid" | "too-many-pages" | "failed", message, pageCount? }
import { createRequire } from "node:module";
import path from "node:path";
import { isMainThread, parentPort, Worker } from "node:worker_threads";

/** Starts a worker thread running this file. */
export function startPdfWorker(options) {
  return new Worker(new URL(import.meta.url), options);
}

if (!isMainThread) {
  const require = createRequire(import.meta.url);
  const pdfjsRoot = path.dirname(require.resolve("pdfjs-dist/package.json"));
  const { getDocument, VerbosityLevel } = await import("pdfjs-dist/legacy/build/pdf.mjs");

  /** pdfjs wants folder "URLs" ending in a slash; in Node it reads them as file paths. */
  const folder = (name) => path.join(pdfjsRoot, name) + path.sep;

  const extract = async ({ bytes, maxPages }) => {
    const task = getDocument({
      data: bytes,
      // Predefined CMaps: text of CJK fonts without an embedded CMap.
      cMapUrl: folder("cmaps"),
      cMapPacked: true,
      standardFontDataUrl: folder("standard_fonts"),
      wasmUrl: folder("wasm"),
      iccUrl: folder("iccs"),
      // A document must never make pdfjs compile code (CVE-2024-4367 class of bugs).
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      verbosity: VerbosityLevel.ERRORS,
    });
    let document;
    try {
      document = await task.promise;
    } catch (error) {
      const name = error?.name ?? "";
      if (name === "PasswordException") return { ok: false, kind: "password", message: String(error.message) };
      if (name === "InvalidPDFException" || name === "FormatError") return { ok: false, kind: "invalid", message: String(error.message) };
      return { ok: false, kind: "failed", message: String(error?.message ?? error) };
    }
    try {
      const pageCount = document.numPages;
      if (pageCount > maxPages) return { ok: false, kind: "too-many-pages", message: `${pageCount} pages`, pageCount };
      const pages = [];
      for (let number = 1; number <= pageCount; number++) {
        const page = await document.getPage(number);
        const content = await page.getTextContent();
        let text = "";
        for (const item of content.items) {
          // Marked-content markers carry no `str`.
          if (typeof item.str !== "string") continue;
          text += item.str;
          if (item.hasEOL) text += "\n";
        }
        pages.push(text);
        page.cleanup();
      }
      return { ok: true, pageCount, pages };
    } catch (error) {
      return { ok: false, kind: "invalid", message: String(error?.message ?? error) };
    } finally {
      await document.destroy();
    }
  };

  parentPort.on("message", async (job) => {
    const reply = await extract(job).catch((error) => ({ ok: false, kind: "failed", message: String(error?.message ?? error) }));
    parentPort.postMessage(reply);
  });
}
