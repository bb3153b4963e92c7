import { Document as DocxDocument, Packer, Paragraph } from "docx";
import JSZip from "jszip";
import PDFDocument from "pdfkit";

/** Small real files of each accepted type, generated so tests carry no binary fixtures. */
export async function pdfFile(text = "Quarry test PDF. Quarterly revenue grew in every region."): Promise<Buffer> {
  const doc = new PDFDocument({ size: "A5", compress: true });
  const chunks: Buffer[] = [];
  doc.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve) => doc.on("end", () => resolve()));
  doc.fontSize(12).text(text);
  doc.end();
  await done;
  return Buffer.concat(chunks);
}

export async function docxFile(text = "Quarry test DOCX. Shipping policy: orders leave within two days."): Promise<Buffer> {
  const doc = new DocxDocument({ sections: [{ children: [new Paragraph(text)] }] });
  return Packer.toBuffer(doc);
}

/** A ZIP archive that is not a Word document (an Excel-like layout). */
export async function zipWithoutWord(): Promise<Buffer> {
  const zip = new JSZip();
  zip.file("[Content_Types].xml", "<Types/>");
  zip.file("xl/workbook.xml", "<workbook/>");
  return zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" });
}

export const csvFile = () => Buffer.from("region,revenue\nNorth,120\nSouth,95\nZürich,77\n", "utf8");
export const txtFile = () => Buffer.from("Quarry test text.\nÜnïcødé is fine; tabs\tand CRLF\r\nare too.\n", "utf8");
