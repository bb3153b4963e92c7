import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { chunkDocument } from "./chunk";
import { reasonOf } from "@/test/support/reason-of";
import { extractPlainText } from "./plain";
import { MAX_WORD_CHARS } from "./words";
import { measurePace, paced } from "@/test/machine-pace";

const SAMPLE = "Größe café naïve Zürich — “quoted” 5 €";

describe("txt extraction", () => {
  it("detects UTF-8 (with or without BOM) and UTF-16 LE/BE by their BOM", async () => {
    const cases: Array<[Buffer, string]> = [
      [Buffer.from(SAMPLE, "utf8"), "utf-8"],
      [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(SAMPLE, "utf8")]), "utf-8"],
      [Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(SAMPLE, "utf16le")]), "utf-16le"],
      [iconv.encode(SAMPLE, "utf-16be", { addBOM: true }), "utf-16be"],
    ];
    for (const [bytes, encoding] of cases) {
      const doc = await extractPlainText(bytes, "txt");
      expect(doc).toMatchObject({ encoding, segments: [{ text: SAMPLE }], wordCount: 8 });
    }
  });

  it("falls back to Latin-1 (windows-1252) and trusts chardet only when it is confident", async () => {
    const latin1 = await extractPlainText(iconv.encode("Der Müller aß Brötchen in Zürich, très bien.", "latin1"), "txt");
    expect(latin1).toMatchObject({ encoding: "windows-1252", segments: [{ text: "Der Müller aß Brötchen in Zürich, très bien." }] });
    const smartQuotes = await extractPlainText(iconv.encode("He said “hello” — it’s 5€.", "windows-1252"), "txt");
    expect(smartQuotes.segments[0].text).toBe("He said “hello” — it’s 5€.");
    const russian = "Привет, как дела? Это русский текст о продажах и выручке за квартал.";
    const cyrillic = await extractPlainText(iconv.encode(russian, "windows-1251"), "txt");
    expect(cyrillic).toMatchObject({ encoding: "windows-1251", segments: [{ text: russian }] });
    expect((await extractPlainText(Buffer.from([0x63, 0x61, 0x66, 0xe9]), "txt")).segments[0].text).toBe("café");
  });

  it("replaces control characters with spaces", async () => {
    const doc = await extractPlainText(Buffer.from("alpha\u0000beta\u0007gamma\tdelta\r\nepsilon"), "txt");
    expect(doc.segments[0].text).toBe("alpha beta gamma\tdelta\r\nepsilon");
    expect(doc.wordCount).toBe(5);
  });

  it("handles a 10 MB single-line file quickly, with or without spaces", async () => {
    const line = Buffer.alloc(10 * 1024 * 1024, "lorem ipsum dolor sit amet ");
    // Quick is under 5 s on a quiet machine, stretched by how busy this one is now.
    const bound = paced(5_000, measurePace());
    let started = performance.now();
    const doc = await extractPlainText(line, "txt");
    const chunks = chunkDocument(doc);
    expect(performance.now() - started).toBeLessThan(bound);
    expect(doc.wordCount).toBe(line.toString("latin1").split(" ").filter(Boolean).length);
    expect(chunks).toHaveLength(Math.ceil((doc.wordCount - 50) / 450));
    expect(chunks.at(-1)!.wordEnd).toBe(doc.wordCount);

    const noSpaces = Buffer.alloc(10 * 1024 * 1024, "x");
    started = performance.now();
    const solid = await extractPlainText(noSpaces, "txt");
    const solidChunks = chunkDocument(solid);
    expect(performance.now() - started).toBeLessThan(bound);
    // One 10 MB "word" would make one unbounded chunk; it counts as pieces of MAX_WORD_CHARS.
    expect(solid.wordCount).toBe(Math.ceil(noSpaces.length / MAX_WORD_CHARS));
    expect(Math.max(...solidChunks.map((c) => c.text.length))).toBeLessThanOrEqual(500 * MAX_WORD_CHARS);
  });

  it("refuses a document without words", async () => {
    expect(await reasonOf(extractPlainText(Buffer.from(" \n\t \r\n"), "txt"))).toBe("The document contains no text");
    expect(await reasonOf(extractPlainText(Buffer.alloc(0), "txt"))).toBe("The document contains no text");
  });
});

describe("csv extraction", () => {
  it("renders each data row as header: value lines, numbered from 1 after the header", async () => {
    const doc = await extractPlainText(Buffer.from("region,amount,note\nNorth,1200,\nSouth,950,late payment\n"), "csv");
    expect(doc.segments).toEqual([
      { text: "region: North\namount: 1200", row: 1 },
      { text: "region: South\namount: 950\nnote: late payment", row: 2 },
    ]);
    expect(doc).toMatchObject({ rowCount: 2, encoding: "utf-8", wordCount: 11 });
  });

  it("handles quoted newlines and delimiters, ragged rows, blank lines, a BOM and other delimiters", async () => {
    const csv = '\ufeffname,city,,amount\n"Smith, Jane","New\nYork",x,10\n\nShort\nLong,Paris,y,20,extra\n';
    const doc = await extractPlainText(Buffer.from(csv), "csv");
    expect(doc.segments).toEqual([
      { text: "name: Smith, Jane\ncity: New\nYork\ncolumn 3: x\namount: 10", row: 1 },
      { text: "name: Short", row: 2 },
      { text: "name: Long\ncity: Paris\ncolumn 3: y\namount: 20\ncolumn 5: extra", row: 3 },
    ]);
    const semicolons = await extractPlainText(iconv.encode("région;montant\nNord;1,5\n", "latin1"), "csv");
    expect(semicolons).toMatchObject({ encoding: "windows-1252", segments: [{ text: "région: Nord\nmontant: 1,5", row: 1 }] });
    const tabs = await extractPlainText(Buffer.from("a\tb\n1\t2\n"), "csv");
    expect(tabs.segments).toEqual([{ text: "a: 1\nb: 2", row: 1 }]);
  });

  it("keeps row numbers of later rows when a row has only empty values", async () => {
    const doc = await extractPlainText(Buffer.from("a,b\n,\n3,4\n"), "csv");
    expect(doc.segments).toEqual([{ text: "a: 3\nb: 4", row: 2 }]);
    expect(doc.rowCount).toBe(2);
  });

  it("refuses invalid CSV, a header without rows and an empty file", async () => {
    expect(await reasonOf(extractPlainText(Buffer.from('a,b\n1,"unterminated\n2,3\n'), "csv"))).toMatch(/^The CSV file is not valid: .*quote/i);
    expect(await reasonOf(extractPlainText(Buffer.from("region,amount\n"), "csv"))).toBe("The CSV file has no data rows");
    expect(await reasonOf(extractPlainText(Buffer.from(""), "csv"))).toBe("The CSV file has no data rows");
    expect(await reasonOf(extractPlainText(Buffer.from("a,b\n,\n"), "csv"))).toBe("The document contains no text");
  });
});

describe("large text files", () => {
  /** Timer ticks that got through while `work` ran: none if it held the event loop the whole time. */
  async function ticksDuring(work: () => Promise<unknown>): Promise<number> {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      await work();
    } finally {
      clearInterval(timer);
    }
    return ticks;
  }

  it("extracts a 10 MB CSV and a 10 MB text without holding the event loop", async () => {
    const lines = ["order,region,amount,note"];
    for (let i = 0, size = 0; size < 10 * 1024 * 1024; i++) {
      lines.push(`${i},North,${i * 3}.50,"said ""ok"", then left"`);
      size += lines.at(-1)!.length + 1;
    }
    const csv = Buffer.from(lines.join("\n"));
    let rows = 0;
    expect(await ticksDuring(async () => (rows = (await extractPlainText(csv, "csv")).rowCount ?? 0))).toBeGreaterThan(10);
    expect(rows).toBe(lines.length - 1);
    const txt = Buffer.alloc(10 * 1024 * 1024, "lorem ipsum dolor sit amet ");
    expect(await ticksDuring(() => extractPlainText(txt, "txt"))).toBeGreaterThan(3);
  });
});

describe("extractPlainText", () => {
  it("refuses a type it cannot index", async () => {
    expect(await reasonOf(extractPlainText(Buffer.from("x"), "xlsx" as "txt"))).toBe("Files of type .xlsx cannot be indexed");
  });
});
