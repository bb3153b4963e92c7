import { Document as DocxDocument, HeadingLevel, Packer, Paragraph } from "docx";
import JSZip from "jszip";
import { describe, expect, it } from "vitest";
import { readZipDirectory } from "../zip-directory";
import { DEFAULT_DOCX_LIMITS, extractDocx } from "./docx";
import { docxWithParagraphs, prose } from "./fixtures/generate";
import { reasonOf } from "@/test/support/reason-of";
import { extractPlainText } from "./plain";

/** A minimal docx built by hand, so its parts can be anything. */
async function handMadeDocx(documentXml: string | Buffer, extra: Record<string, string | Buffer> = {}): Promise<Buffer> {
  const zip = new JSZip();
  zip.file("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>');
  zip.file("_rels/.rels", '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>');
  zip.file("word/document.xml", documentXml);
  for (const [name, content] of Object.entries(extra)) zip.file(name, content);
  return zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" });
}

const paragraphXml = (text: string) =>
  `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:body></w:document>`;

/** A Word document whose paragraphs given as `# Title` are styled Heading 1 (and `## …` Heading 2). */
async function docxWithHeadings(paragraphs: string[]): Promise<Buffer> {
  const children = paragraphs.map((text) => {
    const level = /^(#+) /.exec(text)?.[1].length;
    return level ? new Paragraph({ text: text.slice(level + 1), heading: level === 1 ? HeadingLevel.HEADING_1 : HeadingLevel.HEADING_2 }) : new Paragraph({ text });
  });
  return Packer.toBuffer(new DocxDocument({ sections: [{ children }] }));
}

describe("docx extraction", () => {
  it("splits a document at its headings, each section carrying its heading; joined, the sections are the text", async () => {
    const docx = await docxWithHeadings(["Staff handbook, 2026 edition.", "# Returns & refunds", "Refunds are paid within 14 days.", "## Damaged <goods>", "Photograph them first.", "# Opening hours", "Stores open at 08:00."]);
    const doc = await extractPlainText(docx, "docx");
    expect(doc.segments.map((s) => [s.heading ?? null, s.text.trim()])).toEqual([
      [null, "Staff handbook, 2026 edition."],
      ["Returns & refunds", "Returns & refunds\n\nRefunds are paid within 14 days."],
      ["Damaged <goods>", "Damaged <goods>\n\nPhotograph them first."],
      ["Opening hours", "Opening hours\n\nStores open at 08:00."],
    ]);
    const plain = await extractPlainText(await docxWithParagraphs(["Staff handbook, 2026 edition.", "Returns & refunds", "Refunds are paid within 14 days.", "Damaged <goods>", "Photograph them first.", "Opening hours", "Stores open at 08:00."]), "docx");
    expect(doc.segments.map((s) => s.text).join("\n\n")).toBe(plain.segments[0].text);
    expect(doc.wordCount).toBe(plain.wordCount);
  });

  it("extracts the paragraphs of a Word document", async () => {
    const docx = await docxWithParagraphs(["Shipping policy", prose(120), "Zürich office: 3 days"]);
    const doc = await extractPlainText(docx, "docx");
    expect(doc.segments).toHaveLength(1);
    expect(doc.segments[0].text).toContain("Shipping policy\n\n");
    expect(doc.segments[0].text).toContain("Zürich office: 3 days");
    expect(doc.wordCount).toBe(2 + 120 + 4);
    expect(doc.pageCount).toBeUndefined();
  });

  it("refuses a zip bomb by its declared expansion ratio before inflating it", async () => {
    const bomb = await handMadeDocx(paragraphXml("tiny"), { "word/media/padding.xml": Buffer.alloc(20 * 1024 * 1024, 0x20) });
    expect(bomb.length).toBeLessThan(200 * 1024);
    expect(await reasonOf(extractPlainText(bomb, "docx"))).toMatch(/zip bomb: word\/media\/padding\.xml expands \d+ times/);
  });

  it("refuses a document whose parts add up to more than the limit", async () => {
    const big = await handMadeDocx(paragraphXml(prose(2000)));
    expect(await reasonOf(extractDocx(big, { ...DEFAULT_DOCX_LIMITS, maxUncompressedBytes: 4096 }))).toMatch(/^The Word document expands to \d+ KiB; at most 4 KiB are accepted$/);
    expect(await reasonOf(extractDocx(big, { ...DEFAULT_DOCX_LIMITS, maxEntries: 2 }))).toBe("The Word document has 5 parts; at most 2 are accepted");
  });

  it("refuses an entry that inflates past the size its directory declares", async () => {
    const lying = await handMadeDocx(paragraphXml(prose(3000)));
    // Walk the central directory to word/document.xml's record and make it claim 100 bytes.
    const endOfDirectory = lying.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    let at = lying.readUInt32LE(endOfDirectory + 16);
    const nameAt = (record: number) => lying.toString("utf8", record + 46, record + 46 + lying.readUInt16LE(record + 28));
    while (nameAt(at) !== "word/document.xml") at += 46 + lying.readUInt16LE(at + 28) + lying.readUInt16LE(at + 30) + lying.readUInt16LE(at + 32);
    expect(lying.readUInt32LE(at + 24)).toBeGreaterThan(10_000);
    lying.writeUInt32LE(100, at + 24);
    const directory = readZipDirectory(lying, lying.length);
    expect(directory.ok && directory.entries.find((e) => e.name === "word/document.xml")?.uncompressedSize).toBe(100);
    expect(await reasonOf(extractPlainText(lying, "docx"))).toBe("The Word document looks like a zip bomb: word/document.xml expands past its declared size");
  });

  it("refuses files that are not Word documents, and corrupt parts", async () => {
    expect(await reasonOf(extractPlainText(Buffer.from("plain text, not a zip"), "docx"))).toMatch(/not a valid Word document: no ZIP end-of-directory/);
    const zip = new JSZip();
    zip.file("xl/workbook.xml", "<workbook/>");
    expect(await reasonOf(extractPlainText(await zip.generateAsync({ type: "nodebuffer" }), "docx"))).toMatch(/has no word\/document\.xml/);
    const broken = await handMadeDocx("<w:document this is not xml");
    expect(await reasonOf(extractPlainText(broken, "docx"))).toMatch(/could not be read/);
    const real = await docxWithParagraphs([prose(50)]);
    const truncated = Buffer.concat([real.subarray(0, 200), real.subarray(400)]);
    expect(await reasonOf(extractPlainText(truncated, "docx"))).toMatch(/Word document/);
  });

  it("refuses a document without words", async () => {
    expect(await reasonOf(extractPlainText(await docxWithParagraphs(["", "   "]), "docx"))).toBe("The document contains no text");
  });
});
