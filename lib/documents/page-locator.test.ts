import { describe, expect, it } from "vitest";
import { chunkDocument } from "./chunk";
import { locatePassage } from "./page-locator";

describe("locatePassage", () => {
  const doc = {
    segments: [
      { text: "Introduction to the warehouse handbook and its chapters.", page: 3 },
      { text: "Forklift safety: operators wear a helmet and check the brakes daily.", page: 4 },
      { text: "Refunds are paid within fourteen days of the returned item arriving.", page: 5 },
    ],
    wordCount: 33,
  };
  const [chunk] = chunkDocument(doc as Parameters<typeof chunkDocument>[0], { size: 100, overlap: 0 });

  it("finds the page of the best-matching passage inside a chunk, not its first page", () => {
    expect(chunk.pageStart).toBe(3);
    expect(locatePassage(chunk.text, chunk.pageStart, "how many days until refunds are paid").page).toBe(5);
    expect(locatePassage(chunk.text, chunk.pageStart, "forklift brakes").page).toBe(4);
    // Nothing matches: the chunk's first page.
    expect(locatePassage(chunk.text, chunk.pageStart, "penguins").page).toBe(3);
  });

  it("strips the page marks from the text it answers", () => {
    const { text } = locatePassage(chunk.text, chunk.pageStart, "refunds");
    expect(text).not.toContain("\f");
    expect(text).toBe(doc.segments.map((s) => s.text).join("\n\n"));
  });

  it("counts pages without words (skipped pages) and leaves chunks without pages alone", () => {
    expect(locatePassage("alpha beta\n\n\f\f\fgamma refund", 2, "refund").page).toBe(5);
    expect(locatePassage("no pages here", null, "pages")).toEqual({ text: "no pages here", page: null });
  });
});
