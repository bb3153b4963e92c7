// PDFium (WebAssembly, @embedpdf/pdfium, a devDependency) as a PDF text extraction candidate for
// bench/extraction.ts only: the text of every page through FPDFText_GetText, on this thread.
import fs from "node:fs";
import { createRequire } from "node:module";
import { init } from "@embedpdf/pdfium";

type Pdfium = Awaited<ReturnType<typeof init>>;
// The package's typings reference @types/emscripten for the heap views, which is not installed here.
type Heap = { HEAPU8: Uint8Array };
let loading: Promise<Pdfium> | undefined;

async function load(): Promise<Pdfium> {
  // The .wasm ships inside the npm package: nothing is fetched at run time.
  const wasmBinary = fs.readFileSync(createRequire(import.meta.url).resolve("@embedpdf/pdfium/pdfium.wasm"));
  const pdfium = await init({ wasmBinary: wasmBinary.buffer.slice(wasmBinary.byteOffset, wasmBinary.byteOffset + wasmBinary.byteLength) });
  pdfium.PDFiumExt_Init();
  return pdfium;
}

/** Seconds-scale first call: compiling the 4 MB module. Later calls reuse it. */
export function loadPdfium(): Promise<Pdfium> {
  return (loading ??= load());
}

/** One string per page, and the size the WebAssembly heap has grown to (its peak: it never shrinks). */
export async function pdfiumPages(bytes: Uint8Array): Promise<{ pages: string[]; heapBytes: number }> {
  const pdfium = await loadPdfium();
  const runtime = pdfium.pdfium;
  const heap = () => (runtime as unknown as Heap).HEAPU8; // a new view whenever the memory grows
  const data = runtime.wasmExports.malloc(bytes.byteLength);
  heap().set(bytes, data);
  const doc = pdfium.FPDF_LoadMemDocument(data, bytes.byteLength, "");
  try {
    if (!doc) throw new Error(`PDFium could not open the PDF (error ${pdfium.FPDF_GetLastError()})`);
    const pages: string[] = [];
    const count = pdfium.FPDF_GetPageCount(doc);
    for (let index = 0; index < count; index++) {
      const page = pdfium.FPDF_LoadPage(doc, index);
      const textPage = pdfium.FPDFText_LoadPage(page);
      const chars = pdfium.FPDFText_CountChars(textPage);
      const buffer = runtime.wasmExports.malloc((chars + 1) * 2);
      pdfium.FPDFText_GetText(textPage, 0, chars, buffer);
      pages.push(runtime.UTF16ToString(buffer));
      runtime.wasmExports.free(buffer);
      pdfium.FPDFText_ClosePage(textPage);
      pdfium.FPDF_ClosePage(page);
    }
    return { pages, heapBytes: heap().byteLength };
  } finally {
    if (doc) pdfium.FPDF_CloseDocument(doc);
    runtime.wasmExports.free(data);
  }
}
