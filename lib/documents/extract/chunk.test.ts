import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkDocument, type DocumentChunk } from "./chunk";
import type { ExtractedDocument, TextSegment } from "./types";
import { MAX_WORD_CHARS } from "./words";

/** Reference tokenizer for documents whose words are all shorter than MAX_WORD_CHARS. */
const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean);

function documentOf(segments: TextSegment[]): ExtractedDocument {
  return { segments, wordCount: segments.reduce((n, s) => n + wordsOf(s.text).length, 0) };
}

const numbered = (count: number, prefix = "w") => Array.from({ length: count }, (_, i) => `${prefix}${i}`).join(" ");

const word = fc.stringMatching(/^[a-zA-Z0-9äöüß€,.;:'"()-]{1,12}$/);
const separator = fc.constantFrom(" ", "  ", "\n", "\t", " \r\n ", "\u00a0");
const segmentText = fc
  .array(fc.tuple(word, separator), { maxLength: 40 })
  .chain((pairs) => separator.map((lead) => lead + pairs.map(([w, s]) => w + s).join("")));
const segmentsArb = fc.oneof(
  fc.array(segmentText, { minLength: 1, maxLength: 8 }).map((texts) => texts.map((text, i): TextSegment => ({ text, page: i * 2 + 1 }))),
  fc.array(segmentText, { minLength: 1, maxLength: 8 }).map((texts) => texts.map((text, i): TextSegment => ({ text, row: i + 1 }))),
  segmentText.map((text): TextSegment[] => [{ text }]),
);
const optionsArb = fc.integer({ min: 1, max: 60 }).chain((size) => fc.record({ size: fc.constant(size), overlap: fc.integer({ min: 0, max: size - 1 }) }));

describe("chunkDocument properties", () => {
  it("covers every word in order, overlaps exactly, never exceeds the size and never splits a word", () => {
    fc.assert(
      fc.property(segmentsArb, optionsArb, (segments, { size, overlap }) => {
        const doc = documentOf(segments);
        const all = segments.flatMap((s) => wordsOf(s.text).map((w) => ({ w, page: s.page ?? null, row: s.row ?? null })));
        const chunks = chunkDocument(doc, { size, overlap });
        if (all.length === 0) {
          expect(chunks).toEqual([]);
          return;
        }
        expect(chunks[0].wordStart).toBe(0);
        expect(chunks.at(-1)!.wordEnd).toBe(all.length);
        chunks.forEach((chunk, i) => {
          expect(chunk.ordinal).toBe(i);
          expect(chunk.wordEnd - chunk.wordStart).toBeLessThanOrEqual(size);
          if (i < chunks.length - 1) expect(chunk.wordEnd - chunk.wordStart).toBe(size);
          if (i > 0) expect(chunks[i - 1].wordEnd - chunk.wordStart).toBe(overlap);
          const expected = all.slice(chunk.wordStart, chunk.wordEnd);
          expect(wordsOf(chunk.text)).toEqual(expected.map((e) => e.w));
          expect([chunk.pageStart, chunk.pageEnd]).toEqual([expected[0].page, expected.at(-1)!.page]);
          expect([chunk.rowStart, chunk.rowEnd]).toEqual([expected[0].row, expected.at(-1)!.row]);
        });
        // The last chunk is not wholly inside the one before it.
        if (chunks.length > 1) expect(chunks.at(-1)!.wordEnd).toBeGreaterThan(chunks.at(-2)!.wordEnd);
      }),
      { numRuns: 300 },
    );
  });

  it("cuts words longer than MAX_WORD_CHARS into pieces that still cover the text", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 450 }), { minLength: 1, maxLength: 20 }), fc.integer({ min: 1, max: 8 }), (lengths, size) => {
        const text = lengths.map((n, i) => String.fromCharCode(97 + (i % 26)).repeat(n)).join(" ");
        const expectedPieces = lengths.reduce((n, len) => n + Math.ceil(len / MAX_WORD_CHARS), 0);
        const chunks = chunkDocument({ segments: [{ text }], wordCount: expectedPieces }, { size, overlap: 0 });
        expect(chunks.at(-1)!.wordEnd).toBe(expectedPieces);
        expect(chunks.map((c) => c.text).join("").replace(/\s/g, "")).toBe(text.replace(/\s/g, ""));
        for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(size * MAX_WORD_CHARS + size);
      }),
    );
  });
});

describe("chunkDocument", () => {
  it("uses 500 words with 50 of overlap by default", () => {
    const chunks = chunkDocument(documentOf([{ text: numbered(1200) }]));
    expect(chunks.map((c) => [c.wordStart, c.wordEnd])).toEqual([
      [0, 500],
      [450, 950],
      [900, 1200],
    ]);
    expect(chunks[1].text.startsWith("w450 w451")).toBe(true);
    expect(chunks[1].text.endsWith("w948 w949")).toBe(true);
  });

  it("gives a short document one chunk with its text as written", () => {
    const text = "Shipping policy:\n\norders leave  within two days.";
    expect(chunkDocument(documentOf([{ text: `  ${text}\n` }]))).toEqual<DocumentChunk[]>([
      { ordinal: 0, text, wordStart: 0, wordEnd: 7, pageStart: null, pageEnd: null, rowStart: null, rowEnd: null },
    ]);
  });

  it("joins pages with a blank line and reports the page range", () => {
    const doc = documentOf([
      { text: numbered(8, "a"), page: 2 },
      { text: numbered(8, "b"), page: 3 },
      { text: numbered(8, "c"), page: 5 },
    ]);
    const chunks = chunkDocument(doc, { size: 10, overlap: 2 });
    // A form feed per page advanced marks where the words of each page start (issue 28 §2).
    expect(chunks[0]).toMatchObject({ text: `${numbered(8, "a")}\n\n\fb0 b1`, pageStart: 2, pageEnd: 3 });
    expect(chunks[1]).toMatchObject({ wordStart: 8, wordEnd: 18, text: `b0 b1 b2 b3 b4 b5 b6 b7\n\n\f\fc0 c1`, pageStart: 3, pageEnd: 5 });
    expect(chunks[2]).toMatchObject({ wordStart: 16, wordEnd: 24, pageStart: 5, pageEnd: 5 });
  });

  it("reports the csv row range", () => {
    const rows = Array.from({ length: 30 }, (_, i): TextSegment => ({ text: `region: R${i}\namount: ${i * 10}`, row: i + 1 }));
    const chunks = chunkDocument(documentOf(rows), { size: 40, overlap: 4 });
    expect(chunks.map((c) => [c.rowStart, c.rowEnd])).toEqual([
      [1, 10],
      [10, 19],
      [19, 28],
      [28, 30],
    ]);
    expect(chunks[0].text.split("\n\n")[0]).toBe("region: R0\namount: 0");
  });

  it("counts each Chinese or Japanese character as a word, keeping the text as written", () => {
    const text = "数据仓库 orders 中的";
    const chunks = chunkDocument({ segments: [{ text }], wordCount: 7 }, { size: 3, overlap: 1 });
    expect(chunks.map((c) => [c.text, c.wordStart, c.wordEnd])).toEqual([
      ["数据仓", 0, 3],
      ["仓库 orders", 2, 5],
      ["orders 中的", 4, 7],
    ]);
  });

  it("refuses sizes and overlaps that cannot make progress", () => {
    const doc = documentOf([{ text: "a b c" }]);
    expect(() => chunkDocument(doc, { size: 0 })).toThrow(RangeError);
    expect(() => chunkDocument(doc, { size: 10, overlap: 10 })).toThrow(RangeError);
    expect(() => chunkDocument(doc, { size: 10, overlap: -1 })).toThrow(RangeError);
    expect(() => chunkDocument(doc, { size: 2.5 })).toThrow(RangeError);
  });

  it("does not trust an understated wordCount", () => {
    const chunks = chunkDocument({ segments: [{ text: numbered(100) }], wordCount: 3 }, { size: 30, overlap: 0 });
    expect(chunks.at(-1)!.wordEnd).toBe(100);
  });
});
