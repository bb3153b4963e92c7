import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb, type Database } from "@/lib/db/client";
import { TSVECTOR_SQL } from "./tsvector-calculator";
import { PieceTsvectors, SENTINEL, decodeTsvector, piecesOf, type EngineTsvectors } from "./tsvector-pieces";

let db: Database;
/** The engine's own tsvectors (the test database's: PGlite or the server), counting the texts it is asked. */
let asked: string[] = [];
const engine: EngineTsvectors = async (texts) => {
  asked.push(...texts);
  return (await db.system.query<{ v: Uint8Array }>(TSVECTOR_SQL, [texts])).map((row) => new Uint8Array(row.v));
};
const direct = async (texts: string[]) => (await db.system.query<{ v: Uint8Array }>(TSVECTOR_SQL, [texts])).map((row) => new Uint8Array(row.v));

/** What the english configuration's parser reads in many ways; each a piece or a few. */
const FRAGMENTS = [
  "The", "quick", "foxes", "RUNNING,", "they've", "2024-03-05", "14:30!", "https://example.com/a/b?q=1&b=two#f", "Jane.Doe+tag@sub.example.org",
  "(cc:", "State-of-the-art,", "co-operation;", "e-mails", "--", "—", "“quotes”", "3.14159", "-42", "+7", "1e10", "0x1F", "12,345.67", "2.0.1-beta",
  "$19.99", "50%", "naïve", "café", "Ångström", "Ελληνικά", "русский", "日本語", "emoji🙂here", "/usr/local/bin", "./a", "../x", "~5", "~/file.txt",
  "C:\\Windows", "#tag", "@mention", "report_final_v2.xlsx", "&amp;", "&", "a.b.c", "x.com", "www.example.org/path", "e.g.", "U.S.A.", "..", "...",
  "'quoted'", "\"double\"", "a-b-c-d", "1-2", "-", "_", "__init__", "a_b", "5.", ".5", "a/b", "/", "+", "the", "and", "of", "é", "ß", "İ", "ﬁ",
  "\u00a0", "nbsp\u00a0inside", "zzqquarryz", "Zzqquarryzzz",
];

beforeAll(async () => {
  db = await getDb();
});

describe("tsvectors assembled from pieces", () => {
  it("are byte for byte the engine's own, for varied text, across jobs that reuse what earlier ones read", async () => {
    const texts = [
      FRAGMENTS.join(" "),
      FRAGMENTS.slice().reverse().join("\n\t"),
      "  leading spaces then words, and trailing ones   ",
      "",
      "   ",
      "words only here and here and here",
      FRAGMENTS.slice(10, 40).join("  "),
    ];
    const pieces = new PieceTsvectors(200_000, 1);
    for (const job of [texts, texts.slice(2), [...texts].reverse()]) {
      expect(await pieces.tsvectors(job, engine)).toEqual(await direct(job));
    }
  });

  it("are computed whole where a piece cannot be read alone: a tag, an opening the parser reads differently, a long piece, the sentinel", async () => {
    const texts = [
      "see <a href='x y'>the link</a> here",
      "<!-- a comment with spaces --> after",
      "a < b and c > d",
      "./a at the start",
      "~5 at the start",
      ".5 opens this",
      "«quoted» opens this",
      `a piece ${"x".repeat(300)} too long`,
      `it holds ${SENTINEL}s itself`,
      `or ${SENTINEL.toUpperCase()}`,
    ];
    for (const text of texts) expect(piecesOf(text), text).toBeNull();
    asked = [];
    expect(await new PieceTsvectors(200_000, 1).tsvectors(texts, engine)).toEqual(await direct(texts));
    expect(asked).toEqual(texts);
  });

  it("keep to_tsvector's limits: the first 255 positions of a lexeme, positions clamped at 16,383", async () => {
    const texts = [
      Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? "ro" : "the")).join(" "),
      Array.from({ length: 17_000 }, (_, i) => ["alpha", "beta", "gamma", "of"][i % 4] + (i % 1000 === 0 ? " tail" : "")).join(" ") + " tail tail",
      "ro ".repeat(600),
    ];
    const assembled = await new PieceTsvectors(200_000, 1).tsvectors(texts, engine);
    expect(assembled).toEqual(await direct(texts));
    const first = decodeTsvector(assembled[0]).find((e) => e.lexeme === "ro")!;
    expect(first.positions).toHaveLength(100);
    const clamped = decodeTsvector(assembled[1]).find((e) => e.lexeme === "tail")!;
    expect(clamped.positions.slice(-2)).toEqual([16_018, 16_383]);
    expect(decodeTsvector(assembled[2])[0].positions).toHaveLength(255);
  });

  it("ask the engine for each distinct piece once, and for nothing once every piece is known", async () => {
    const pieces = new PieceTsvectors(200_000, 1);
    asked = [];
    const texts = ["one two three two one", "three two one, one"];
    expect(await pieces.tsvectors(texts, engine)).toEqual(await direct(texts));
    expect(asked).toHaveLength(1);
    expect(asked[0].split(` ${SENTINEL}`).map((p) => p.trim()).filter(Boolean).sort()).toEqual(["one", "one,", "three", "two"]);
    asked = [];
    expect(await pieces.tsvectors(["two one three"], engine)).toEqual(await direct(["two one three"]));
    expect(asked).toEqual([]);
  });

  it("are computed whole when too few of a job's pieces repeat (cheaper than reading each alone)", async () => {
    const pieces = new PieceTsvectors(200_000, 0.3);
    asked = [];
    const diverse = ["every word here differs from all others", "nothing repeats within this second text either"];
    expect(await pieces.tsvectors(diverse, engine)).toEqual(await direct(diverse));
    expect(asked).toEqual(diverse);
    asked = [];
    const repetitive = ["the same few words ".repeat(4), "and again the same few words ".repeat(3)];
    expect(await pieces.tsvectors(repetitive, engine)).toEqual(await direct(repetitive));
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain(SENTINEL);
  });

  it("forget what they hold beyond their bound, and stay exact", async () => {
    const pieces = new PieceTsvectors(5, 1);
    for (const text of ["a b c d e f g", "h i j k l m n", "a b c d e f g h i j k l m n o p"]) {
      expect(await pieces.tsvectors([text], engine)).toEqual(await direct([text]));
    }
  });

  it("compute the texts whole when a batch's answer is not as expected", async () => {
    // An engine whose answer for a batch lost one sentinel, as a token swallowing it would make it.
    const swallowing: EngineTsvectors = (texts) => engine(texts.map((t) => t.replace(SENTINEL, "other")));
    const texts = ["plain words here", "and more words there"];
    expect(await new PieceTsvectors(200_000, 1).tsvectors(texts, swallowing)).toEqual(await direct(texts));
  });

  it("are the engine's own for any text of hostile fragments and whitespace (property)", async () => {
    const whitespace = fc.constantFrom(" ", "  ", "\n", "\t", "\r\n", " \f ", "\v");
    const text = fc
      .array(fc.tuple(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 8 }), fc.constantFrom("a", "b", "1", ".", "-", "/", "@", ":", "~", "&", "'")), whitespace, fc.boolean()), { maxLength: 40 })
      .map((parts) => parts.map(([fragment, space, glue]) => fragment + (glue ? "" : space)).join(""));
    const pieces = new PieceTsvectors(400, 1);
    await fc.assert(
      fc.asyncProperty(fc.array(text, { minLength: 1, maxLength: 6 }), async (texts) => {
        const clean = texts.map((t) => t.replaceAll("\u0000", ""));
        expect(await pieces.tsvectors(clean, engine)).toEqual(await direct(clean));
      }),
      { numRuns: 150 },
    );
  });
});
