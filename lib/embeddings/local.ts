import { LOCAL_EMBEDDING_DIMS, LOCAL_EMBEDDING_MODEL } from "@/lib/config/embedding-models";
import type { Embedder } from "./types";

/*
 * The offline embedder (docs/embeddings.md has the full definition): signed feature hashing of
 * words and character trigrams into 384 dimensions. It is lexical: texts score high when they
 * share words or word fragments, never because they mean the same thing in other words.
 *
 * 1. Fold: Unicode NFKD, drop combining marks (\p{M}), lower-case. "Crème" → "creme".
 * 2. Tokens: maximal runs of letters and digits (\p{L}\p{N}); everything else separates.
 * 3. Features per token t: the word itself, and the character trigrams of "^t$" (so "cat" gives
 *    "^ca", "cat", "at$"). Trigrams make "refund" and "refunds" close.
 * 4. Weights: word features 1.0, trigram features 0.25, times 1 + ln(tf) (sublinear term frequency).
 * 5. Hash: FNV-1a (32-bit) over UTF-16 code units, separate seeds for words and trigrams, then the
 *    murmur3 finaliser; dimension = hash mod 384, sign = the finalised hash's top bit (signed hashing
 *    keeps collisions from adding up in one direction).
 * 6. L2-normalise. A text without tokens gets the unit vector of the reserved feature "<empty>",
 *    so cosine similarity is always defined.
 */

const WORD_WEIGHT = 1;
const TRIGRAM_WEIGHT = 0.25;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const WORD_SEED = FNV_OFFSET;
const TRIGRAM_SEED = 0x9e3779b9;
const BOUNDARY_START = 0x5e; // "^"
const BOUNDARY_END = 0x24; // "$"

const TOKEN = /[\p{L}\p{N}]+/gu;
const COMBINING_MARK = /\p{M}+/gu;
const ASCII_ONLY = /^[\x00-\x7f]*$/;

function fnvStep(hash: number, codeUnit: number): number {
  return Math.imul(hash ^ codeUnit, FNV_PRIME);
}

/** murmur3's 32-bit finaliser: spreads FNV's weak low bits before the modulo. */
function finalise(hash: number): number {
  let h = hash ^ (hash >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Lower-case, accent-folded form of a text (step 1). */
export function foldText(text: string): string {
  return fold(text, ASCII_ONLY.test(text));
}

function fold(text: string, ascii: boolean): string {
  // ASCII has nothing to decompose; skipping NFKD roughly halves the time on English text.
  if (ascii) return text.toLowerCase();
  return text.normalize("NFKD").replace(COMBINING_MARK, "").toLowerCase();
}

/**
 * Counts of hashed features keyed by their finalised 32-bit hash, visited in the order they were
 * first seen (the order they are added to the vector, so the float sums are always the same). An
 * open-addressing table over typed arrays, reused from text to text: a Map per text cost about as
 * much as the hashing itself.
 */
class FeatureCounts {
  private keys = new Uint32Array(1024);
  /** 0 marks a free slot: every feature present has been counted at least once. */
  private counts = new Uint32Array(1024);
  /** Slots in first-seen order. */
  private order = new Int32Array(512);
  size = 0;

  add(hash: number): void {
    const mask = this.keys.length - 1;
    let slot = hash & mask;
    while (this.counts[slot] !== 0 && this.keys[slot] !== hash) slot = (slot + 1) & mask;
    if (this.counts[slot] !== 0) {
      this.counts[slot]++;
      return;
    }
    this.keys[slot] = hash;
    this.counts[slot] = 1;
    this.order[this.size++] = slot;
    if (this.size === this.order.length) this.grow();
  }

  forEach(visit: (hash: number, count: number) => void): void {
    for (let i = 0; i < this.size; i++) visit(this.keys[this.order[i]], this.counts[this.order[i]]);
  }

  clear(): void {
    for (let i = 0; i < this.size; i++) this.counts[this.order[i]] = 0;
    this.size = 0;
  }

  /** Doubles the table (kept at most half full), keeping the first-seen order. */
  private grow(): void {
    const { keys, counts, order, size } = this;
    this.keys = new Uint32Array(keys.length * 2);
    this.counts = new Uint32Array(keys.length * 2);
    this.order = new Int32Array(order.length * 2);
    this.size = 0;
    const mask = this.keys.length - 1;
    for (let i = 0; i < size; i++) {
      let slot = keys[order[i]] & mask;
      while (this.counts[slot] !== 0) slot = (slot + 1) & mask;
      this.keys[slot] = keys[order[i]];
      this.counts[slot] = counts[order[i]];
      this.order[this.size++] = slot;
    }
  }
}

/** One table each for words and trigrams, reused by every call (localEmbedding runs to its end without yielding). */
const wordCounts = new FeatureCounts();
const trigramCounts = new FeatureCounts();

/** Counts the word and the trigrams of "^token$" (step 3) for the token at text[start, end), without building strings. */
function countToken(text: string, start: number, end: number): void {
  let wordHash = WORD_SEED;
  for (let i = start; i < end; i++) wordHash = fnvStep(wordHash, text.charCodeAt(i));
  wordCounts.add(finalise(wordHash));
  const padded = end - start + 2;
  for (let first = 0; first + 3 <= padded; first++) {
    let h = TRIGRAM_SEED;
    for (let k = first; k < first + 3; k++) {
      const code = k === 0 ? BOUNDARY_START : k === padded - 1 ? BOUNDARY_END : text.charCodeAt(start + k - 1);
      h = fnvStep(h, code);
    }
    trigramCounts.add(finalise(h));
  }
}

/** Tokens of folded text (step 2): in ASCII text, runs of [a-z0-9] (what \p{L}\p{N} matches there, after lower-casing), read in place. */
function countFeatures(folded: string, ascii: boolean): void {
  if (!ascii) {
    for (const match of folded.matchAll(TOKEN)) countToken(match[0], 0, match[0].length);
    return;
  }
  let start = -1;
  for (let i = 0; i <= folded.length; i++) {
    const c = i < folded.length ? folded.charCodeAt(i) : 0;
    const wordChar = (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);
    if (wordChar && start < 0) start = i;
    else if (!wordChar && start >= 0) {
      countToken(folded, start, i);
      start = -1;
    }
  }
}

function addFeatures(vector: Float64Array, features: FeatureCounts, weight: number): void {
  features.forEach((hash, count) => {
    const value = weight * (1 + Math.log(count));
    vector[hash % LOCAL_EMBEDDING_DIMS] += hash & 0x80000000 ? -value : value;
  });
}

const EMPTY_FEATURE = (() => {
  let h = WORD_SEED;
  for (const ch of "<empty>") h = fnvStep(h, ch.charCodeAt(0));
  return finalise(h);
})();

/** The local embedding of one text: 384 numbers, unit length. Deterministic across runs and machines. */
export function localEmbedding(text: string): number[] {
  wordCounts.clear();
  trigramCounts.clear();
  const ascii = ASCII_ONLY.test(text);
  countFeatures(fold(text, ascii), ascii);
  const vector = new Float64Array(LOCAL_EMBEDDING_DIMS);
  if (wordCounts.size === 0) wordCounts.add(EMPTY_FEATURE);
  addFeatures(vector, wordCounts, WORD_WEIGHT);
  addFeatures(vector, trigramCounts, TRIGRAM_WEIGHT);
  let norm = 0;
  for (const v of vector) norm += v * v;
  norm = Math.sqrt(norm);
  // Hash collisions can cancel a lone word's features exactly only in theory; guard the division anyway.
  return Array.from(vector, (v) => (norm > 0 ? v / norm : 0));
}

/**
 * The longest stretch embedDocuments computes without yielding to the event loop. Short, because
 * the indexer embeds the next batch while the current one is stored: each of the store's round
 * trips to the database waits for the slice in progress (with 128 chunks at once, the database sat
 * idle for the whole batch's embedding, about a tenth of the indexing time: bench indexing).
 */
const SLICE_MS = 2;

export const localEmbedder: Embedder = {
  provider: "local",
  model: LOCAL_EMBEDDING_MODEL,
  dims: LOCAL_EMBEDDING_DIMS,
  async embedDocuments(texts, opts) {
    const vectors: number[][] = [];
    let sliceStarted = performance.now();
    for (const text of texts) {
      opts?.signal?.throwIfAborted();
      vectors.push(localEmbedding(text));
      if (performance.now() - sliceStarted >= SLICE_MS && vectors.length < texts.length) {
        opts?.onProgress?.(vectors.length, texts.length);
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStarted = performance.now();
      }
    }
    opts?.onProgress?.(vectors.length, texts.length);
    return vectors;
  },
  async embedQuery(text, opts) {
    opts?.signal?.throwIfAborted();
    return localEmbedding(text);
  },
};
