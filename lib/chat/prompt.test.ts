import { describe, expect, it } from "vitest";
import { RELEVANCE_SHARE, relevantPassages } from "./prompt";

// Reciprocal rank fusion (k = 60): a passage ranked first by both searches, then ones only the embedding found.
const rrf = (...ranks: number[]) => ranks.reduce((sum, rank) => sum + 1 / (60 + rank), 0);

describe("relevantPassages", () => {
  it("keeps passages both searches found and drops embedding-only neighbours far below them", () => {
    const hits = [{ id: "both", score: rrf(1, 1) }, { id: "both-2", score: rrf(2, 3) }, { id: "vector-only", score: rrf(3) }, { id: "vector-only-2", score: rrf(4) }];
    expect(relevantPassages(hits).map((h) => h.id)).toEqual(["both", "both-2"]);
  });

  it("keeps every passage when none stands out, and the best one always", () => {
    const vectorOnly = [1, 2, 3, 4, 5].map((rank) => ({ id: rank, score: rrf(rank) }));
    expect(relevantPassages(vectorOnly)).toHaveLength(5);
    expect(relevantPassages([{ score: 0.001 }])).toHaveLength(1);
    expect(relevantPassages([])).toEqual([]);
  });

  it("cuts at the documented share of the best score", () => {
    expect(relevantPassages([{ score: 1 }, { score: RELEVANCE_SHARE }, { score: RELEVANCE_SHARE - 0.001 }])).toHaveLength(2);
  });
});
