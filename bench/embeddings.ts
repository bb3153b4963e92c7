// npm run bench -- embeddings [chunks]: the local embedder on 500-word chunks, beside only folding and tokenising the same texts.
import { foldText, localEmbedder, localEmbedding } from "@/lib/embeddings/local";

const WORDS_PER_CHUNK = 500; // SPEC §8 chunk size
const VOCABULARY = (
  "revenue margin location warehouse order customer product channel refund policy invoice shipment delivery forecast " +
  "quarter budget target inventory supplier contract payment discount region manager report analysis growth decline " +
  "2024 2025 17 42 99.5 sku-1042 q3 eu-west north south east west"
).split(" ");
const ACCENTED = ["café", "résumé", "naïve", "façade", "über", "señor"];

/** Deterministic pseudo-random chunks (a linear congruential generator); one chunk in ten has accented words, the rest is ASCII. */
function makeChunks(count: number): string[] {
  let state = 12345;
  const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0);
  return Array.from({ length: count }, (_, i) => {
    const words: string[] = [];
    for (let w = 0; w < WORDS_PER_CHUNK; w++) {
      const word = i % 10 === 0 && w % 25 === 0 ? ACCENTED[next() % ACCENTED.length] : VOCABULARY[next() % VOCABULARY.length];
      words.push(word + (next() % 7 === 0 ? "." : ""));
    }
    return words.join(" ");
  });
}

const TOKEN = /[\p{L}\p{N}]+/gu;

/** Baseline: what any lexical indexer pays anyway, folding and splitting into words. */
function tokenise(texts: string[]): number {
  let tokens = 0;
  for (const text of texts) for (const match of foldText(text).matchAll(TOKEN)) if (match[0]) tokens += 1;
  return tokens;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export default async function bench(args: string[]): Promise<void> {
  const count = Number(args[0] ?? 2000);
  const texts = makeChunks(count);
  // Warm the JIT on both paths.
  tokenise(texts.slice(0, 200));
  await localEmbedder.embedDocuments(texts.slice(0, 200));

  const runs = 5;
  const tokeniseMs: number[] = [];
  const embedMs: number[] = [];
  let tokens = 0;
  for (let r = 0; r < runs; r++) {
    let start = performance.now();
    tokens = tokenise(texts);
    tokeniseMs.push(performance.now() - start);
    start = performance.now();
    const vectors = await localEmbedder.embedDocuments(texts);
    embedMs.push(performance.now() - start);
    if (vectors.length !== texts.length || vectors[0].length !== 384) throw new Error("wrong embedding output");
  }
  const queries = Array.from({ length: 10_000 }, (_, i) => `${VOCABULARY[i % VOCABULARY.length]} ${VOCABULARY[(i * 7) % VOCABULARY.length]} policy`);
  const queryStart = performance.now();
  for (const q of queries) localEmbedding(q);
  const queryUs = ((performance.now() - queryStart) * 1000) / queries.length;

  const t = median(tokeniseMs);
  const e = median(embedMs);
  const rate = (ms: number) => Math.round(count / (ms / 1000)).toLocaleString("en-US");
  const wordRate = (ms: number) => Math.round((count * WORDS_PER_CHUNK) / (ms / 1000)).toLocaleString("en-US");
  console.log(`local embedder (quarry-local-hash-v1, 384 dims): ${count.toLocaleString("en-US")} chunks of ${WORDS_PER_CHUNK} words (${tokens.toLocaleString("en-US")} tokens), median of ${runs} runs`);
  console.log(`fold + tokenise only (baseline): ${t.toFixed(0)} ms  ${rate(t)} chunks/s  ${wordRate(t)} words/s`);
  console.log(`local embedDocuments           : ${e.toFixed(0)} ms  ${rate(e)} chunks/s  ${wordRate(e)} words/s`);
  console.log(`ratio (embed / tokenise time)  : ${(e / t).toFixed(2)}x`);
  console.log(`query embedding (3 words)      : ${queryUs.toFixed(1)} µs each`);
}
