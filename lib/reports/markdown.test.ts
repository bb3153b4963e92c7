import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { layoutReport } from "./layout";
import { markdownParagraphs } from "./markdown";
import { writePdf } from "./pdf";

const NOTES = `## Reading this page

Figures are **before returns** and *in USD*; see [the handbook](https://example.com/handbook) or [an in-app page](/documents).

- The date filter applies to every widget
  1. nested, numbered
- A link that is not allowed: [run](javascript:alert(1))
`;

describe("markdown in reports", () => {
  it("reads headings, emphasis, nested lists and links by the viewer's link rules", () => {
    const paragraphs = markdownParagraphs(NOTES);
    expect(paragraphs.map((p) => [p.kind, p.level, p.bullet ?? ""])).toEqual([
      ["heading", 2, ""],
      ["paragraph", 0, ""],
      ["item", 1, "•"],
      ["item", 2, "1."],
      ["item", 1, "•"],
    ]);
    const spans = paragraphs[1].spans;
    expect(spans.find((s) => s.text === "before returns")?.face).toBe("bold");
    expect(spans.find((s) => s.text === "in USD")?.face).toBe("italic");
    expect(spans.find((s) => s.text === "the handbook")?.link).toBe("https://example.com/handbook");
    // No page to resolve an in-app path against, and script URLs never pass safeUrl: text without a link.
    expect(spans.find((s) => s.text === "an in-app page")?.link).toBeUndefined();
    expect(paragraphs[4].spans.find((s) => s.text === "run")?.link).toBeUndefined();
  });

  it("draws them in the PDF, the allowed link as a link annotation", async () => {
    const model = {
      title: "Notes",
      lines: [],
      sections: [{ name: "", blocks: [{ id: "notes", title: "Notes", x: 0, y: 0, w: 12, h: 4, block: { kind: "text" as const, paragraphs: markdownParagraphs(NOTES), align: "left" as const, size: 10 } }] }],
    };
    const { pages } = layoutReport(model, { width: 595, height: 842, margin: 32 }, { maxPages: 5, deadline: Number.POSITIVE_INFINITY });
    const pdf = Buffer.from(await writePdf(pages, { title: "t", author: "a" }));
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "report-md-")), "notes.pdf");
    fs.writeFileSync(file, pdf);
    const text = execFileSync("pdftotext", [file, "-"], { encoding: "utf8" }).replace(/\s+/g, " ");
    for (const part of ["Reading this page", "Figures are before returns and in USD", "the handbook", "• The date filter applies to every widget", "1. nested, numbered"]) expect(text).toContain(part);
    // Link annotations sit in the page objects, compressed or not.
    const objects = pdf.toString("latin1") + inflated(pdf);
    expect(objects).toMatch(/\/URI \(https:\/\/example\.com\/handbook\)/);
    expect(objects).not.toMatch(/javascript|\/URI \(\/documents\)/);
  });
});

/** The text of the PDF's deflated streams. */
function inflated(pdf: Buffer): string {
  let out = "";
  const text = pdf.toString("latin1");
  for (const match of text.matchAll(/stream\r?\n/g)) {
    const start = match.index + match[0].length;
    const end = text.indexOf("endstream", start);
    try {
      out += zlib.inflateSync(pdf.subarray(start, end)).toString("latin1");
    } catch {
      // not deflated
    }
  }
  return out;
}
