/**
 * What counts as a match, and the one scale people read (issue 28 §3, docs/search.md "Relevance"). Shared by
 * search, which presents nothing below the floor (vector and hybrid alike), and chat, which cites only matches.
 */

/** A passage is a match when it holds at least this share of the question's words (stemmed, no stop words)… */
export const MIN_TERM_COVERAGE = 0.5;
/** …or at least this many of them (a question about two things: one passage holds the words of one)… */
export const MIN_TERMS_MATCHED = 2;
/**
 * …or, with a semantic embedding provider (not the offline word-matching one, whose similarity is lexical and does
 * not separate related from unrelated text), when its cosine similarity to the question reaches this.
 */
export const MIN_SEMANTIC_SIMILARITY = 0.3;

/** What the floor looks at, as search computes it for each hit. */
export interface RelevanceEvidence {
  /** The full-text search matched every word of the question (hybrid). */
  keyword_match: boolean;
  /** Share (0..1) of the question's words the passage holds. */
  term_coverage: number;
  terms_matched: number;
  /** Cosine similarity of the passage's embedding to the question's. */
  similarity: number;
}

/**
 * Whether a passage answers to the question at all: the full-text search matched it (every word), it holds half the
 * question's words or two of them, or a semantic model finds it close. Measured on the demo documents with the offline
 * embedder: every passage that answers a question covers 50-100 % of its words, unrelated ones 0-33 % and at most one
 * word, while their similarities overlap (0.12 for a right answer, 0.22 for a question about France).
 */
export function isRelevant(hit: RelevanceEvidence, semantic: boolean): boolean {
  if (hit.keyword_match || hit.term_coverage >= MIN_TERM_COVERAGE || hit.terms_matched >= MIN_TERMS_MATCHED) return true;
  return semantic && hit.similarity >= MIN_SEMANTIC_SIMILARITY;
}

/**
 * The one number shown for a match, 0..1 (a percentage on screen), the same in both search modes: the share of the
 * question's words the passage holds (1 for a full-text match of every word), or with a semantic provider its cosine
 * similarity when that is higher. The offline embedder's similarity is left out: it counts shared words and
 * fragments, and read as a percentage it said "12 %" for the passage that answers.
 */
export function relevanceOf(hit: RelevanceEvidence, semantic: boolean): number {
  const words = hit.keyword_match ? 1 : hit.term_coverage;
  const meaning = semantic ? Math.max(0, hit.similarity) : 0;
  return Math.round(Math.min(1, Math.max(words, meaning)) * 1000) / 1000;
}
