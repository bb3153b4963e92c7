// Fault: the paragraph-bomb DOCX with the XML cap lifted, as an operator might configure it.
// mammoth then builds the tree of 240 MiB of paragraphs, which no heap holds: the extraction
// worker runs out of its own heap and is ended, and only that document fails. Before the
// worker, this took the whole server down.
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import * as index from "@/app/api/v1/documents/[id]/index/route";
import * as one from "@/app/api/v1/documents/[id]/route";
import * as upload from "@/app/api/v1/documents/[id]/upload/route";
import * as collection from "@/app/api/v1/documents/route";
import { paragraphBombDocx } from "@/lib/documents/extract/fixtures/generate";
import { call, tokenFor } from "@/test/helpers";
import { QUICK_MS, probeWhile } from "./probe";

// Read once, at first use (lib/config/extraction.ts).
process.env.DOCUMENT_DOCX_MAX_XML_BYTES = String(1024 * 1024 * 1024);
process.env.DOCUMENT_EXTRACT_MAX_HEAP_MB = "256";

describe("fault: the paragraph-bomb DOCX past the XML cap", () => {
  it("ends the extraction worker at its heap limit; the document fails with the reason and the server answers throughout", async () => {
    const token = await tokenFor("acme", "admin");
    const bomb = await paragraphBombDocx(240 * 1024 * 1024);
    const id = (await call(collection.POST, "POST", "/api/v1/documents", { token, body: { filename: "bomb.docx" } })).json.id as string;
    const uploaded = await call(upload.POST, "POST", "/x", {
      token,
      params: { id },
      rawBody: Readable.toWeb(Readable.from([bomb])) as ReadableStream<Uint8Array>,
      headers: { "content-type": "application/vnd.openxmlformats-officedocument.wordprocessingml.document" },
    });
    expect(uploaded.status).toBe(200);

    const report = await probeWhile(() => call(index.POST, "POST", "/x", { token, params: { id } }));
    const answer = report.outcome as Awaited<ReturnType<typeof call>>;
    expect(answer.status).toBe(422);
    expect(answer.json.detail).toBe("The document could not be indexed: Reading the file needed more than 256 MB of memory and was stopped");
    expect(report.probeStatuses.every((s) => s === 200)).toBe(true);
    expect(report.probeMs.length).toBeGreaterThan(1);
    expect(Math.max(...report.probeMs)).toBeLessThan(QUICK_MS);
    expect((await call(one.GET, "GET", "/x", { token, params: { id } })).json).toMatchObject({ status: "failed", status_reason: "Reading the file needed more than 256 MB of memory and was stopped" });
  });
});
