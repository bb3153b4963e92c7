// Fault: a paragraph-bomb DOCX with the XML cap lifted, as an operator might configure it.
// mammoth then builds the tree of all its paragraphs, many times the XML's size: the extraction
// worker runs out of its own heap and is ended, and only that document fails. Before the
// worker, the 240 MiB one took the whole server down; 80 MiB against a 128 MB worker
// heap shows the same at a third of the cost.
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import * as index from "@/app/api/v1/documents/[id]/index/route";
import * as one from "@/app/api/v1/documents/[id]/route";
import * as upload from "@/app/api/v1/documents/[id]/upload/route";
import * as collection from "@/app/api/v1/documents/route";
import { paragraphBombDocx } from "@/lib/documents/extract/fixtures/generate";
import { call, tokenFor } from "@/test/helpers";
import { paced } from "@/test/machine-pace";
import { PACE, QUICK_MS, probeWhile } from "./probe";

// Read once, at first use (lib/config/extraction.ts).
process.env.DOCUMENT_DOCX_MAX_XML_BYTES = String(1024 * 1024 * 1024);
process.env.DOCUMENT_EXTRACT_MAX_HEAP_MB = "128";

describe("fault: the paragraph-bomb DOCX past the XML cap", () => {
  // About 5 s on a quiet 2-core machine; the limit leaves room for a loaded CI runner, and stretches with the load.
  it("ends the extraction worker at its heap limit; the document fails with the reason and the server answers throughout", { timeout: paced(90_000, PACE) }, async () => {
    const token = await tokenFor("acme", "admin");
    const bomb = await paragraphBombDocx(80 * 1024 * 1024);
    const id = (await call(collection.POST, "POST", "/api/v1/documents", { token, body: { filename: "bomb.docx" } })).json.id as string;
    const uploaded = await call(upload.POST, "POST", {
      token,
      params: { id },
      rawBody: Readable.toWeb(Readable.from([bomb])) as ReadableStream<Uint8Array>,
      headers: { "content-type": "application/vnd.openxmlformats-officedocument.wordprocessingml.document" },
    });
    expect(uploaded.status).toBe(200);

    const report = await probeWhile(() => call(index.POST, "POST", { token, params: { id } }));
    const answer = report.outcome as Awaited<ReturnType<typeof call>>;
    expect(answer.status).toBe(422);
    expect(answer.json.detail).toBe("The document could not be indexed: Reading the file needed more than 128 MB of memory and was stopped");
    expect(report.probeStatuses.every((s) => s === 200)).toBe(true);
    expect(report.probeMs.length).toBeGreaterThan(1);
    expect(Math.max(...report.probeMs)).toBeLessThan(QUICK_MS);
    expect((await call(one.GET, "GET", { token, params: { id } })).json).toMatchObject({ status: "failed", status_reason: "Reading the file needed more than 128 MB of memory and was stopped" });
  });
});
