import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countWords, countWordsInTurns, forEachWord, MAX_WORD_CHARS } from "./words";

const piece = fc.constantFrom("word", "Zürich", "数据", "仓", "かな", "カタ", " ", "  ", "\n", "\t", "x".repeat(150), "😀", "a😀b");
const text = fc.array(piece, { maxLength: 60 }).map((parts) => parts.join(""));

describe("words", () => {
  it("splits on whitespace, makes each Chinese/Japanese character a word and cuts runs at MAX_WORD_CHARS", () => {
    const spans: string[] = [];
    const sample = `Zürich 数据 かなカタ ${"y".repeat(MAX_WORD_CHARS + 5)}`;
    forEachWord(sample, (start, end) => spans.push(sample.slice(start, end)));
    expect(spans).toEqual(["Zürich", "数", "据", "か", "な", "カ", "タ", "y".repeat(MAX_WORD_CHARS), "yyyyy"]);
  });

  it("never cuts a long run between the halves of a surrogate pair", () => {
    const sample = "a".repeat(MAX_WORD_CHARS - 1) + "😀" + "b";
    const spans: string[] = [];
    forEachWord(sample, (start, end) => spans.push(sample.slice(start, end)));
    expect(spans).toEqual(["a".repeat(MAX_WORD_CHARS - 1), "😀b"]);
  });

  it("reads ASCII text in place exactly as the regex reads it (runs of non-whitespace, cut at MAX_WORD_CHARS)", () => {
    const ascii = fc.array(fc.constantFrom("ab", "Z9", "x".repeat(130), " ", "\t", "\n", "\v", "\f", "\r", "\u0000", "\u001f", "\u007f", "-.,"), { maxLength: 80 });
    fc.assert(
      fc.property(ascii, (parts) => {
        const sample = parts.join("");
        const spans: string[] = [];
        forEachWord(sample, (start, end) => spans.push(sample.slice(start, end)));
        // The definition: \S+ runs of the Unicode-aware regex, cut every MAX_WORD_CHARS characters.
        const expected = [...sample.matchAll(/\S+/gu)].flatMap(([run]) => Array.from({ length: Math.ceil(run.length / MAX_WORD_CHARS) }, (_, i) => run.slice(i * MAX_WORD_CHARS, (i + 1) * MAX_WORD_CHARS)));
        expect(spans).toEqual(expected);
        // One character outside ASCII takes the regex path, which agrees on the rest.
        expect(countWords(`${sample} é`)).toBe(expected.length + 1);
      }),
    );
  });

  it("counts the same in turns as in one go, wherever the turns fall", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(text, { maxLength: 4 }), fc.integer({ min: 1, max: 40 }), async (texts, charsPerTurn) => {
        const expected = texts.reduce((n, t) => n + countWords(t), 0);
        expect(await countWordsInTurns(texts, undefined, charsPerTurn)).toBe(expected);
      }),
    );
  });

  it("stops counting when the signal aborts", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(countWordsInTurns(["a b c d e f"], controller.signal, 2)).rejects.toThrow("stop");
  });
});
