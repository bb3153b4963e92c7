import PDFDocument from "pdfkit";
import SVGtoPDF from "svg-to-pdfkit";
import { CJK_FAMILY, type FontFace, fontkitFace, textRuns, textWidth } from "./fonts";
import type { Op, Page } from "./layout";

/**
 * Pages of drawing operations as a vector PDF: text in the shipped fonts (embedded, subset by
 * pdfkit), CJK runs in the CJK face, charts placed as vectors by svg-to-pdfkit at their box size
 * (1 px = 1 pt), links as link annotations.
 */

const FONT_NAMES: Record<FontFace, string> = { regular: "Report", bold: "Report-Bold", italic: "Report-Italic", cjk: "Report-CJK" };

function usesCjk(pages: Page[]): boolean {
  return pages.some((page) => page.ops.some((op) => (op.kind === "text" && textRuns(op.text).some((r) => r.face === "cjk")) || (op.kind === "svg" && op.svg.includes(CJK_FAMILY))));
}

export async function writePdf(pages: Page[], info: { title: string; author: string }): Promise<Uint8Array> {
  // The shipped regular face is the document's first font, so pdfkit never loads its own Helvetica.
  // pdfkit accepts a fontkit font where its types say a path (PDFFontFactory.open: any object with `layout`).
  const doc = new PDFDocument({ autoFirstPage: false, margin: 0, font: fontkitFace("regular") as unknown as string, info: { Title: info.title, Author: info.author, Creator: "Quarry" }, compress: true });
  const chunks: Buffer[] = [];
  doc.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    doc.on("end", resolve);
    doc.on("error", reject);
  });
  const cjk = usesCjk(pages);
  for (const face of ["regular", "bold", "italic", ...(cjk ? ["cjk" as const] : [])] as FontFace[]) doc.registerFont(FONT_NAMES[face], fontkitFace(face) as unknown as string);
  const svgFont = (family: string, bold: boolean, italic: boolean) => (cjk && family.includes(CJK_FAMILY) ? FONT_NAMES.cjk : bold ? FONT_NAMES.bold : italic ? FONT_NAMES.italic : FONT_NAMES.regular);
  const pen = new Pen(doc);
  for (const page of pages) {
    doc.addPage({ size: [page.width, page.height], margin: 0 });
    pen.reset();
    for (const op of page.ops) draw(doc, pen, op, svgFont);
  }
  doc.end();
  await done;
  return new Uint8Array(Buffer.concat(chunks));
}

/**
 * The font, size and colour last set: pdfkit's font() looks the font up again on every call, which
 * a table of a few thousand cells in one face pays for thousands of times.
 */
class Pen {
  private font = "";
  private size = 0;
  private color = "";
  constructor(private readonly doc: PDFKit.PDFDocument) {}
  reset(): void {
    this.font = "";
    this.size = 0;
    this.color = "";
  }
  set(font: string, size: number, color: string): void {
    if (font !== this.font) this.doc.font((this.font = font));
    if (size !== this.size) this.doc.fontSize((this.size = size));
    if (color !== this.color) this.doc.fillColor((this.color = color));
  }
}

function draw(doc: PDFKit.PDFDocument, pen: Pen, op: Op, svgFont: (family: string, bold: boolean, italic: boolean) => string): void {
  switch (op.kind) {
    case "text": {
      let x = op.x;
      for (const run of textRuns(op.text, op.face)) {
        pen.set(FONT_NAMES[run.face], op.size, op.color);
        doc.text(run.text, x, op.y, { lineBreak: false, baseline: "alphabetic" });
        x += textWidth(run.text, op.size, run.face === "cjk" ? "regular" : run.face);
      }
      return;
    }
    case "rect": {
      doc.save().lineWidth(0.75);
      const shape = op.radius ? doc.roundedRect(op.x, op.y, op.w, op.h, op.radius) : doc.rect(op.x, op.y, op.w, op.h);
      if (op.fill && op.stroke) shape.fillAndStroke(op.fill, op.stroke);
      else if (op.fill) shape.fill(op.fill);
      else if (op.stroke) shape.stroke(op.stroke);
      doc.restore();
      pen.reset();
      return;
    }
    case "line":
      doc.save().lineWidth(op.width).moveTo(op.x1, op.y1).lineTo(op.x2, op.y2).stroke(op.color).restore();
      pen.reset();
      return;
    case "poly":
      doc.save().polygon(...op.points).fill(op.fill).restore();
      pen.reset();
      return;
    case "svg":
      // imageCallback: an <image> inside an SVG is never read from disk or the network.
      SVGtoPDF(doc, op.svg, op.x, op.y, { width: op.w, height: op.h, assumePt: true, fontCallback: svgFont, imageCallback: () => "", warningCallback: () => undefined });
      // The chart set fonts and colours of its own.
      pen.reset();
      return;
    case "image": {
      doc.save().rect(op.x, op.y, op.w, op.h).clip();
      const placement = op.fit === "fill" ? { width: op.w, height: op.h } : op.fit === "cover" ? { cover: [op.w, op.h] as [number, number], align: "center" as const, valign: "center" as const } : { fit: [op.w, op.h] as [number, number], align: "center" as const, valign: "center" as const };
      doc.image(Buffer.from(op.bytes), op.x, op.y, placement);
      doc.restore();
      return;
    }
    case "link":
      doc.link(op.x, op.y, op.w, op.h, op.url);
      return;
  }
}
