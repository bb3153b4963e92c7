import crypto from "node:crypto";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { ContentInspector, ContentMismatchError, EmptyContentError } from "./content-inspector";
import type { DocumentType } from "../file-types";
import { csvFile, docxFile, pdfFile, txtFile, zipWithoutWord } from "@/test/support/document-files";
import { readZipDirectory } from "../zip-directory";

async function inspect(type: DocumentType, data: Buffer, chunk = 1000) {
  const inspector = new ContentInspector(type);
  const parts = Array.from({ length: Math.ceil(data.length / chunk) }, (_, i) => data.subarray(i * chunk, (i + 1) * chunk));
  let passed = 0;
  await pipeline(Readable.from(parts), inspector, new Writable({ write: (c: Buffer, _e, cb) => ((passed += c.length), cb()) }));
  return { inspector, passed };
}

describe("content inspection", () => {
  it("accepts real files of each type and hashes them while streaming", async () => {
    for (const [type, data] of [["pdf", await pdfFile()], ["docx", await docxFile()], ["csv", csvFile()], ["txt", txtFile()]] as const) {
      const { inspector, passed } = await inspect(type, data);
      expect(passed).toBe(data.length);
      expect(inspector.size).toBe(data.length);
      expect(inspector.sha256).toBe(crypto.createHash("sha256").update(data).digest("hex"));
    }
  });

  it("refuses a .pdf that is a ZIP, naming what it is", async () => {
    await expect(inspect("pdf", await docxFile())).rejects.toThrow(/not a PDF: its content is (zip|docx)/);
  });

  it("refuses a .docx that is a ZIP without word/document.xml, or not a ZIP at all", async () => {
    await expect(inspect("docx", await zipWithoutWord())).rejects.toThrow(/without word\/document\.xml.*Excel/);
    await expect(inspect("docx", await pdfFile())).rejects.toThrow(/not a Word document \(\.docx\): its content is pdf/);
    const truncated = (await docxFile()).subarray(0, 2000);
    await expect(inspect("docx", truncated)).rejects.toBeInstanceOf(ContentMismatchError);
  });

  it("refuses binary bytes in text and empty files", async () => {
    await expect(inspect("txt", Buffer.from("abc\0def"))).rejects.toThrow(/binary data/);
    await expect(inspect("csv", await pdfFile())).rejects.toBeInstanceOf(ContentMismatchError);
    await expect(inspect("txt", Buffer.from("\ufeffhello", "utf16le"))).rejects.toBeInstanceOf(ContentMismatchError);
    await expect(inspect("txt", Buffer.alloc(0))).rejects.toBeInstanceOf(EmptyContentError);
  });

  it("reads a ZIP directory from the tail only", async () => {
    const docx = await docxFile();
    const tail = docx.subarray(docx.length - 1500);
    const read = readZipDirectory(tail, docx.length);
    if (read.ok) expect(read.names).toContain("word/document.xml");
    else expect(read.reason).toMatch(/too large to check/);
    const full = readZipDirectory(docx, docx.length);
    expect(full.ok && full.names).toContain("word/document.xml");
    expect(readZipDirectory(Buffer.from("not a zip at all, just text"), 27)).toMatchObject({ ok: false });
  });
});

describe("declared length", () => {
  it("fails a body that ends short of its Content-Length, or runs past it", async () => {
    const data = Buffer.from("region,revenue\nNorth,120\n");
    const short = new ContentInspector("csv", data.length + 10);
    await expect(pipeline(Readable.from([data]), short, new Writable({ write: (_c, _e, cb) => cb() }))).rejects.toThrow(/Received 25 of 35 declared bytes/);
    const long = new ContentInspector("csv", 5);
    await expect(pipeline(Readable.from([data]), long, new Writable({ write: (_c, _e, cb) => cb() }))).rejects.toThrow(/declared bytes/);
    const exact = new ContentInspector("csv", data.length);
    await pipeline(Readable.from([data]), exact, new Writable({ write: (_c, _e, cb) => cb() }));
    expect(exact.size).toBe(data.length);
  });
});
