import { describe, expect, it } from "vitest";
import { MIN_SEMANTIC_SIMILARITY, isRelevant, relevanceOf } from "./relevance";

const hit = (over: Partial<Parameters<typeof isRelevant>[0]>) => ({ keyword_match: false, term_coverage: 0, terms_matched: 0, similarity: 0, ...over });

describe("the relevance floor and scale", () => {
  it("a match holds half the query's words, two of them, all of them (full text), or is close in meaning to a semantic model", () => {
    expect(isRelevant(hit({ term_coverage: 0.5, terms_matched: 1 }), false)).toBe(true);
    expect(isRelevant(hit({ term_coverage: 0.4, terms_matched: 2 }), false)).toBe(true);
    expect(isRelevant(hit({ keyword_match: true }), false)).toBe(true);
    expect(isRelevant(hit({ term_coverage: 0.33, terms_matched: 1, similarity: 0.9 }), false)).toBe(false);
    expect(isRelevant(hit({ similarity: MIN_SEMANTIC_SIMILARITY }), true)).toBe(true);
    expect(isRelevant(hit({ similarity: MIN_SEMANTIC_SIMILARITY - 0.01 }), true)).toBe(false);
    // The floor is above 0 everywhere: a passage that shares nothing and points away is never a match.
    expect(isRelevant(hit({ similarity: -0.1 }), true)).toBe(false);
    expect(isRelevant(hit({}), true)).toBe(false);
  });

  it("shows one 0..1 number: the words' share, or a semantic model's similarity when higher; never the offline embedder's", () => {
    expect(relevanceOf(hit({ term_coverage: 0.5, similarity: 0.12 }), false)).toBe(0.5);
    expect(relevanceOf(hit({ term_coverage: 0.5, similarity: 0.71234 }), true)).toBe(0.712);
    expect(relevanceOf(hit({ keyword_match: true, term_coverage: 0.8, similarity: 0.2 }), true)).toBe(1);
    expect(relevanceOf(hit({ similarity: -0.4 }), true)).toBe(0);
  });
});
