import { describe, expect, it } from "vitest";
import { foldText, localEmbedder, localEmbedding } from "./local";
import { LOCAL_EMBEDDING_DIMS, LOCAL_EMBEDDING_MODEL } from "@/lib/config/embedding-models";

const cosine = (a: number[], b: number[]) => a.reduce((sum, v, i) => sum + v * b[i], 0);

/**
 * The definition in docs/embeddings.md, written the plain way (strings, padded words, sliced
 * trigrams), so the optimised implementation is checked against the documented one.
 */
function documentedEmbedding(text: string): number[] {
  const fnv = (seed: number, s: string) => {
    let h = seed;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    let f = h ^ (h >>> 16);
    f = Math.imul(f, 0x85ebca6b);
    f ^= f >>> 13;
    f = Math.imul(f, 0xc2b2ae35);
    return (f ^ (f >>> 16)) >>> 0;
  };
  const folded = text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
  const tokens = folded.match(/[\p{L}\p{N}]+/gu) ?? [];
  const words = new Map<string, number>();
  const trigrams = new Map<string, number>();
  for (const t of tokens) {
    words.set(t, (words.get(t) ?? 0) + 1);
    const padded = `^${t}$`;
    for (let i = 0; i + 3 <= padded.length; i++) trigrams.set(padded.slice(i, i + 3), (trigrams.get(padded.slice(i, i + 3)) ?? 0) + 1);
  }
  if (tokens.length === 0) words.set("<empty>", 1);
  const v = new Array<number>(384).fill(0);
  const add = (features: Map<string, number>, seed: number, weight: number) => {
    for (const [feature, tf] of features) {
      const h = fnv(seed, feature);
      v[h % 384] += (h >= 2 ** 31 ? -1 : 1) * weight * (1 + Math.log(tf));
    }
  };
  add(words, 0x811c9dc5, 1);
  add(trigrams, 0x9e3779b9, 0.25);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

describe("local embedder (quarry-local-hash-v1)", () => {
  it("is the documented feature hashing: same vectors as the plain reference implementation", () => {
    for (const text of ["The quick brown fox", "Crème brûlée, 2× faster!", "refund refund refund policy", "東京 タワー 2024", "", "  ...  ", "x"]) {
      const actual = localEmbedding(text);
      const expected = documentedEmbedding(text);
      expect(actual).toHaveLength(LOCAL_EMBEDDING_DIMS);
      actual.forEach((value, i) => expect(value).toBeCloseTo(expected[i], 12));
    }
  });

  it("gives unit vectors, deterministically, also for text without words", () => {
    const a = localEmbedding("Quarterly revenue by location");
    expect(localEmbedding("Quarterly revenue by location")).toEqual(a);
    expect(cosine(a, a)).toBeCloseTo(1, 12);
    expect(cosine(localEmbedding(""), localEmbedding("!!!"))).toBeCloseTo(1, 12);
  });

  it("folds case and accents", () => {
    expect(foldText("Crème BRÛLÉE")).toBe("creme brulee");
    expect(cosine(localEmbedding("Crème Brûlée"), localEmbedding("creme brulee"))).toBeCloseTo(1, 12);
  });

  it("ranks texts sharing words above unrelated ones, and word variants above most strangers", () => {
    const query = localEmbedding("refund policy");
    const related = cosine(query, localEmbedding("Our refund policy allows returns within 30 days."));
    const variant = cosine(query, localEmbedding("Refunds follow the policies below."));
    const strangers = [
      "The warehouse opens at nine in the morning.",
      "Quarterly revenue grew in every location.",
      "Install the printer driver first.",
      "Lunch is served on the terrace.",
      "Safety shoes are required on the loading dock.",
      "The board meets on the first Monday of each month.",
      "Forklift batteries charge overnight.",
      "Badges must be worn at all times.",
      "Invoices are paid within forty-five days.",
      "Parking is available behind building B.",
    ].map((t) => cosine(query, localEmbedding(t)));
    expect(related).toBeGreaterThan(0.4);
    expect(related).toBeGreaterThan(Math.max(...strangers) + 0.2);
    expect(strangers.filter((c) => c < variant).length).toBeGreaterThanOrEqual(8);
    // Unrelated texts meet only through hash collisions: one shared dimension can give ±0.2 against a two-word query, the average stays small.
    expect(strangers.reduce((sum, c) => sum + Math.abs(c), 0) / strangers.length).toBeLessThan(0.12);
  });

  it("is lexical, not semantic: synonyms without shared words do not match", () => {
    expect(cosine(localEmbedding("automobile"), localEmbedding("car"))).toBeLessThan(0.2);
  });

  it("embeds documents in order with progress and honours an aborted signal", async () => {
    expect([localEmbedder.provider, localEmbedder.model, localEmbedder.dims]).toEqual(["local", LOCAL_EMBEDDING_MODEL, 384]);
    // 500-word chunks, as the indexer embeds them: long enough that the batch is computed in several slices.
    const texts = Array.from({ length: 200 }, (_, i) => `chunk number ${i} ${"lorem ipsum dolor sit amet ".repeat(100)}`);
    const progress: number[] = [];
    let otherWorkRan = false;
    setImmediate(() => (otherWorkRan = true));
    const vectors = await localEmbedder.embedDocuments(texts, { onProgress: (done, total) => progress.push(done / total) });
    expect(vectors[199]).toEqual(localEmbedding(texts[199]));
    expect(progress.at(-1)).toBe(1);
    // It yields between slices: the event loop ran other work before the batch was done (without a
    // yield, the await above resumes in a microtask, before any setImmediate callback).
    expect(progress.length).toBeGreaterThan(2);
    expect(otherWorkRan).toBe(true);
    expect(await localEmbedder.embedQuery(texts[7])).toEqual(vectors[7]);
    const controller = new AbortController();
    controller.abort(new Error("cancelled"));
    await expect(localEmbedder.embedDocuments(texts, { signal: controller.signal })).rejects.toThrow("cancelled");
  });
});
