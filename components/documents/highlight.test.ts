import { describe, expect, it } from "vitest";
import { highlightPattern, queryWords } from "./highlight";

const marked = (text: string, query: string) => text.split(highlightPattern(query)!).filter((_, i) => i % 2 === 1);

describe("search highlights", () => {
  it("marks whole query words and their plural or verb forms, not stop words or the inside of other words", () => {
    const text = "Read the chiller displays: chillers must hold 1-5 °C. Then log them; these logs are delivered weekly.";
    expect(marked(text, "what temperature must the chillers hold")).toEqual(["chillers", "must", "hold"]);
    expect(marked(text, "chiller log deliver")).toEqual(["chiller", "chillers", "log", "logs", "delivered"]);
  });

  it("keeps unicode words and random markers whole, and ignores queries of stop words only", () => {
    expect(marked("Politique de remboursement: qjxkwzpvla. Kunden-Rückgabe", "remboursement QJXKWZPVLA rückgabe")).toEqual(["remboursement", "qjxkwzpvla", "Rückgabe"]);
    expect(queryWords("what is the")).toEqual([]);
    expect(highlightPattern("what is the")).toBeNull();
  });
});
