import { describe, expect, it } from "vitest";
import { RELEVANCE_SHARE, passageAnchor, passageLabel, relevantPassages } from "./prompt";

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

describe("where a citation opens and what it says", () => {
  const base = { page: null, rows: null, heading: null, page_start: null, page_end: null, row_start: null, row_end: null };
  it("opens a PDF at the passage's page and a CSV at its rows (RFC 7111: the header is row 1); nothing for txt and docx", () => {
    expect(passageAnchor({ ...base, extension: "pdf", page: 5 })).toBe("#page=5");
    expect(passageAnchor({ ...base, extension: "csv", rows: { start: 3, end: 3 } })).toBe("#row=4");
    expect(passageAnchor({ ...base, extension: "csv", rows: { start: 3, end: 5 } })).toBe("#row=4-6");
    expect(passageAnchor({ ...base, extension: "docx", heading: "Returns" })).toBe("");
    expect(passageAnchor({ ...base, extension: "txt" })).toBe("");
  });

  it("labels the passage itself, not the chunk's range", () => {
    expect(passageLabel({ ...base, extension: "pdf", page: 5, page_start: 3, page_end: 6 })).toBe("page 5");
    expect(passageLabel({ ...base, extension: "csv", rows: { start: 12, end: 13 }, row_start: 1, row_end: 40 })).toBe("rows 12–13");
    expect(passageLabel({ ...base, extension: "csv", rows: { start: 12, end: 12 } })).toBe("row 12");
    expect(passageLabel({ ...base, extension: "docx", heading: "Returns" })).toBe("§ Returns");
    expect(passageLabel({ ...base, extension: "txt" })).toBe("");
  });
});
