import { describe, expect, it } from "vitest";
import { chunkDocument } from "../extract/chunk";
import { locatePassage } from "./page-locator";

const at = (pageStart: number | null) => ({ pageStart, rowStart: null, rowEnd: null });

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
    expect(locatePassage(chunk.text, at(chunk.pageStart), "how many days until refunds are paid").page).toBe(5);
    expect(locatePassage(chunk.text, at(chunk.pageStart), "forklift brakes").page).toBe(4);
    // Nothing matches: the chunk's first page.
    expect(locatePassage(chunk.text, at(chunk.pageStart), "penguins").page).toBe(3);
  });

  it("strips the page marks from the text it answers", () => {
    const { text } = locatePassage(chunk.text, at(chunk.pageStart), "refunds");
    expect(text).not.toContain("\f");
    expect(text).toBe(doc.segments.map((s) => s.text).join("\n\n"));
  });

  it("counts pages without words (skipped pages) and leaves chunks without pages alone", () => {
    expect(locatePassage("alpha beta\n\n\f\f\fgamma refund", at(2), "refund").page).toBe(5);
    expect(locatePassage("no pages here", at(null), "pages")).toEqual({ text: "no pages here", page: null, rows: null, heading: null, passage: "no pages here" });
  });

  it("passes the best page's own text on as the passage to highlight", () => {
    expect(locatePassage(chunk.text, at(chunk.pageStart), "forklift brakes").passage).toBe(doc.segments[1].text);
  });

  it("finds the data rows of the best-matching passage in a CSV chunk, a run of rows when neighbours match as well", () => {
    const csv = {
      segments: [
        { text: "store: North\nmanager: Ada Lovelace\nopening: 08:00", row: 1 },
        { text: "store: South\nmanager: Alan Turing\nopening: 09:00", row: 2 },
        // Row 3 was empty: counted, not stored.
        { text: "store: West\nmanager: Grace Hopper\nopening: 07:30", row: 4 },
        { text: "store: West annex\nmanager: Grace Hopper\nopening: 07:45", row: 5 },
      ],
      wordCount: 40,
    };
    const [rows] = chunkDocument(csv as Parameters<typeof chunkDocument>[0], { size: 100, overlap: 0 });
    expect([rows.rowStart, rows.rowEnd]).toEqual([1, 5]);
    const start = { pageStart: null, rowStart: rows.rowStart, rowEnd: rows.rowEnd };
    const turing = locatePassage(rows.text, start, "who manages the South store");
    expect(turing.rows).toEqual({ start: 2, end: 2 });
    expect(turing.passage).toBe(csv.segments[1].text);
    expect(turing.text).not.toMatch(/\v/);
    // Grace Hopper manages two neighbouring rows: both are the passage.
    expect(locatePassage(rows.text, start, "Grace Hopper").rows).toEqual({ start: 4, end: 5 });
    // Nothing matches: the first row; a chunk of one row (no marks) answers its own row.
    expect(locatePassage(rows.text, start, "penguins").rows).toEqual({ start: 1, end: 1 });
    expect(locatePassage("store: North", { pageStart: null, rowStart: 7, rowEnd: 7 }, "north").rows).toEqual({ start: 7, end: 7 });
  });

  it("names the heading of the best-matching section of a Word document's chunk, the first one's too when the chunk starts inside it", () => {
    const docx = {
      segments: [
        { text: "Staff handbook for every store." },
        { text: "Returns\n\nRefunds are paid within fourteen days of the item arriving.", heading: "Returns" },
        { text: "Opening hours\n\nStores open at eight and close at ten.", heading: "Opening hours" },
      ],
      wordCount: 25,
    };
    const [whole] = chunkDocument(docx as Parameters<typeof chunkDocument>[0], { size: 100, overlap: 0 });
    const none = { pageStart: null, rowStart: null, rowEnd: null };
    const refunds = locatePassage(whole.text, none, "when are refunds paid");
    expect(refunds).toMatchObject({ heading: "Returns", page: null, rows: null, passage: docx.segments[1].text });
    // The text shown is the document's, marks and all removed.
    expect(refunds.text).toBe(docx.segments.map((s) => s.text).join("\n\n"));
    expect(locatePassage(whole.text, none, "handbook").heading).toBeNull();
    // A chunk starting inside "Returns": its text opens with that heading (embedded with it), which the locator answers and strips.
    const later = chunkDocument(docx as Parameters<typeof chunkDocument>[0], { size: 8, overlap: 0 })[1];
    expect(later.text.startsWith("\u2028Returns\u2028\n\n")).toBe(true);
    const located = locatePassage(later.text, none, "fourteen days");
    expect(located.heading).toBe("Returns");
    expect(located.text).not.toMatch(/[\u2028\u2029]/);
  });
});
