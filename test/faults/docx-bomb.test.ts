// Fault: the 25 MB paragraph-bomb DOCX of issue 12 (word/document.xml of 240 MiB of tiny
// paragraphs, compression ratio under 10, so the zip-bomb checks pass). It took the server past
// its heap limit. Now the document fails with a reason, other requests are answered meanwhile,
// and what was committed before stays.
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import * as index from "@/app/api/v1/documents/[id]/index/route";
import * as one from "@/app/api/v1/documents/[id]/route";
import * as upload from "@/app/api/v1/documents/[id]/upload/route";
import * as collection from "@/app/api/v1/documents/route";
import * as search from "@/app/api/v1/documents/search/route";
import { paragraphBombDocx } from "@/lib/documents/extract/fixtures/generate";
import { readZipDirectory } from "@/lib/documents/zip-directory";
import { call, tokenFor } from "@/test/helpers";
import { paced } from "@/test/machine-pace";
import { PACE, QUICK_MS, probeWhile } from "./probe";

describe("fault: the paragraph-bomb DOCX", () => {
  // About 8 s on a quiet 2-core machine; the limit leaves room for a loaded CI runner, and stretches with the load.
  it("marks the document failed with a reason while other requests are answered and indexed documents stay searchable", { timeout: paced(90_000, PACE) }, async () => {
    const token = await tokenFor("acme", "admin");
    // Committed before the fault: an indexed document.
    const kept = (await call(collection.POST, "POST", "/api/v1/documents", { token, body: { filename: "kept.txt" } })).json.id as string;
    const keptText = Buffer.from("The warehouse in Rotterdam ships pallets of zinc every Tuesday.");
    expect((await call(upload.POST, "POST", { token, params: { id: kept }, rawBody: new Uint8Array(keptText), headers: { "content-type": "text/plain" } })).status).toBe(200);
    expect((await call(index.POST, "POST", { token, params: { id: kept } })).status).toBe(200);

    const bomb = await paragraphBombDocx(240 * 1024 * 1024);
    const directory = readZipDirectory(bomb, bomb.length);
    if (!directory.ok) throw new Error(directory.reason);
    const xml = directory.entries.find((e) => e.name === "word/document.xml")!;
    expect(bomb.length).toBeLessThan(30 * 1024 * 1024);
    expect(xml.uncompressedSize).toBeGreaterThanOrEqual(240 * 1024 * 1024);
    expect(xml.uncompressedSize / xml.compressedSize).toBeLessThan(10);

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
    expect(answer.json.detail).toMatch(/word\/document\.xml\) expands to 240 MiB; at most 32 MiB are accepted/);
    expect(report.probeStatuses.every((s) => s === 200)).toBe(true);
    expect(Math.max(...report.probeMs)).toBeLessThan(QUICK_MS);

    const record = (await call(one.GET, "GET", { token, params: { id } })).json;
    expect(record).toMatchObject({ status: "failed", status_reason: expect.stringMatching(/word\/document\.xml\) expands to/) });
    const found = await call(search.POST, "POST", "/api/v1/documents/search", { token, body: { query: "zinc pallets Rotterdam", top_k: 3 } });
    expect(found.status).toBe(200);
    expect(found.json.results.map((r: { document_id: string }) => r.document_id)).toContain(kept);
  });
});
