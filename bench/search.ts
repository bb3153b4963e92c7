// npm run bench -- search [sizes, default 10000,100000] [queries, default 50]: document search at
// 10k and 100k chunks of 384-dim vectors, through the same SQL as the API (searchChunks in a tenant
// transaction: RLS, current-generation filter, join for titles): HNSW (the migration's partial
// index, iterative scan) against the baseline, an exact scan, with recall@10 of HNSW against exact.
//
// Vectors are clustered like real embeddings (topics -> documents -> chunks), not independent random
// ones: on those every point is about equally far from every other, and no approximate index can
// find "the" neighbours (DESIGN.md). Rows are loaded with binary COPY into a fresh file-backed PGlite
// in a temporary folder; the index is built after loading, as CREATE INDEX, with the migration's
// definition.
import type { Database } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { LOCAL_EMBEDDING_MODEL } from "@/lib/embeddings/models";
import { searchChunks, type ChunkSearch } from "@/lib/documents/search";
import { withScratchDb } from "./lib/scratch-db";

const DIMS = 384;
const ORG = "org_bench";
const DOCUMENTS = 1000;
const TOPICS = 100;
const TOP_K = 10;
const INDEX_NAME = "document_chunks_hnsw_quarry_local_hash_v1";

/** Deterministic normal deviates (mulberry32 + Box-Muller). */
function generator(seed: number) {
  let a = seed >>> 0;
  const uniform = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  return { uniform, normal };
}

function normalised(v: Float64Array): Float64Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  return v.map((x) => x / norm);
}

/** topic centre + document offset + chunk noise: neighbours share a document, then a topic. */
class Corpus {
  private readonly random = generator(42);
  readonly topics = Array.from({ length: TOPICS }, () => this.direction(1));
  readonly documentTopic = Array.from({ length: DOCUMENTS }, (_, d) => d % TOPICS);
  readonly documentOffset = Array.from({ length: DOCUMENTS }, () => this.direction(0.6));

  private direction(scale: number): Float64Array {
    const v = normalised(Float64Array.from({ length: DIMS }, () => this.random.normal()));
    return v.map((x) => x * scale);
  }

  chunk(documentIndex: number): Float64Array {
    const topic = this.topics[this.documentTopic[documentIndex]];
    const offset = this.documentOffset[documentIndex];
    const noise = this.direction(0.5);
    return normalised(topic.map((t, i) => t + offset[i] + noise[i]));
  }

  /** A query near a random document's topic. */
  query(): Float64Array {
    const d = Math.floor(this.random.uniform() * DOCUMENTS);
    const noise = this.direction(0.7);
    const topic = this.topics[this.documentTopic[d]];
    const offset = this.documentOffset[d];
    return normalised(topic.map((t, i) => t + 0.5 * offset[i] + noise[i]));
  }
}

/** PostgreSQL's binary COPY format for the columns loaded below. */
class CopyWriter {
  private readonly parts: Buffer[] = [Buffer.from("PGCOPY\n\xff\r\n\0", "latin1"), Buffer.alloc(8)];
  private static readonly FIELDS = 10;

  row(values: { orgId: string; documentId: string; ordinal: number; text: string; vector: Float64Array }) {
    const head = Buffer.alloc(2);
    head.writeInt16BE(CopyWriter.FIELDS);
    this.parts.push(head);
    this.text(values.orgId);
    this.text(values.documentId);
    this.int(1); // generation
    this.int(values.ordinal);
    this.text(values.text);
    this.int(values.ordinal * 450); // word_start
    this.int(values.ordinal * 450 + 500); // word_end
    this.text(LOCAL_EMBEDDING_MODEL);
    this.int(DIMS);
    // pgvector's binary form: int16 dimensions, int16 unused, float4 values.
    const vector = Buffer.alloc(4 + 4 + DIMS * 4);
    vector.writeInt32BE(4 + DIMS * 4, 0);
    vector.writeInt16BE(DIMS, 4);
    vector.writeInt16BE(0, 6);
    values.vector.forEach((x, i) => vector.writeFloatBE(x, 8 + i * 4));
    this.parts.push(vector);
  }

  finish(): Buffer {
    const trailer = Buffer.alloc(2);
    trailer.writeInt16BE(-1);
    this.parts.push(trailer);
    return Buffer.concat(this.parts);
  }

  private text(value: string) {
    const bytes = Buffer.from(value, "utf8");
    const length = Buffer.alloc(4);
    length.writeInt32BE(bytes.length);
    this.parts.push(length, bytes);
  }

  private int(value: number) {
    const b = Buffer.alloc(8);
    b.writeInt32BE(4, 0);
    b.writeInt32BE(value, 4);
    this.parts.push(b);
  }
}

const WORDS = "revenue margin warehouse order customer product refund policy invoice shipment delivery forecast quarter budget inventory supplier contract payment discount region".split(" ");
/** About 40 words of text per chunk: real chunks are ~500 words, but the text only matters to hybrid search, which this bench does not time. */
function chunkText(n: number): string {
  const words: string[] = [];
  for (let i = 0; i < 40; i++) words.push(WORDS[(n * 7 + i * 13) % WORDS.length]);
  return words.join(" ");
}

async function load(db: Database, corpus: Corpus, size: number): Promise<{ copyMs: number; buildMs: number }> {
  await db.system.exec(`DROP INDEX IF EXISTS ${INDEX_NAME}; TRUNCATE document_chunks`);
  // Loading only: per-row foreign-key checks (every row's document exists, inserted above) would dominate the load.
  await db.system.exec("ALTER TABLE document_chunks DISABLE TRIGGER ALL");
  let copyMs = 0;
  // 10k rows per COPY: one blob of every row would be copied whole into PGlite's WebAssembly memory.
  for (let from = 0; from < size; from += 10_000) {
    const writer = new CopyWriter();
    for (let i = from; i < Math.min(size, from + 10_000); i++) {
      const d = i % DOCUMENTS;
      writer.row({ orgId: ORG, documentId: `doc_bench_${d}`, ordinal: Math.floor(i / DOCUMENTS), text: chunkText(i), vector: corpus.chunk(d) });
    }
    const data = writer.finish();
    const started = performance.now();
    await db.copyFrom("COPY document_chunks (org_id, document_id, generation, ordinal, text, word_start, word_end, model, dims, embedding) FROM STDIN WITH (FORMAT binary)", data);
    copyMs += performance.now() - started;
  }
  await db.system.exec("ALTER TABLE document_chunks ENABLE TRIGGER ALL");
  const started = performance.now();
  // The graph of 100k x 384 fits in memory with this; the default 64 MB makes the build spill and crawl.
  await db.system.exec(`SET maintenance_work_mem = '1GB'`);
  await db.system.exec(
    `CREATE INDEX ${INDEX_NAME} ON document_chunks USING hnsw ((embedding::vector(${DIMS})) vector_cosine_ops) WHERE model = '${LOCAL_EMBEDDING_MODEL}'`,
  );
  const buildMs = performance.now() - started;
  await db.system.exec("RESET maintenance_work_mem; ANALYZE document_chunks; ANALYZE documents");
  return { copyMs, buildMs };
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

async function timeSearches(queries: Float64Array[], strategy: "auto" | "exact", efSearch?: number) {
  const ms: number[] = [];
  const results: string[][] = [];
  for (const q of queries) {
    const search: ChunkSearch = { vector: Array.from(q), queryText: "", model: LOCAL_EMBEDDING_MODEL, dims: DIMS, topK: TOP_K, documentIds: null, mode: "vector", strategy, efSearch };
    const started = performance.now();
    const hits = await withTenant({ orgId: ORG }, (tx) => searchChunks(tx, search));
    ms.push(performance.now() - started);
    results.push(hits.map((h) => h.chunk_id));
  }
  return { p50: percentile(ms, 50), p95: percentile(ms, 95), results };
}

function recall(approx: string[][], exact: string[][]): number {
  let found = 0;
  let total = 0;
  approx.forEach((ids, i) => {
    const truth = new Set(exact[i]);
    found += ids.filter((id) => truth.has(id)).length;
    total += truth.size;
  });
  return found / total;
}

export default async function bench(args: string[]): Promise<void> {
  const sizes = (args[0] ?? "10000,100000").split(",").map(Number);
  const queryCount = Number(args[1] ?? 50);
  await withScratchDb("search", async (db) => {
    await db.system.query("INSERT INTO organizations (id, slug, name) VALUES ($1, 'bench', 'Bench')", [ORG]);
    await db.system.exec(
      `INSERT INTO documents (id, org_id, title, filename, content_type, extension, created_by, status, index_generation, index_model, index_dims)
       SELECT 'doc_bench_' || d, '${ORG}', 'Document ' || d, 'document-' || d || '.txt', 'text/plain', 'txt', 'bench', 'indexed', 1, '${LOCAL_EMBEDDING_MODEL}', ${DIMS}
       FROM generate_series(0, ${DOCUMENTS - 1}) d`,
    );
    const corpus = new Corpus();
    const queries = Array.from({ length: queryCount }, () => corpus.query());
    console.log(`search bench: ${DIMS}-dim clustered vectors (${TOPICS} topics, ${DOCUMENTS} documents), top ${TOP_K}, ${queryCount} queries, embedded engine (PGlite, pgvector 0.8), API search SQL`);
    for (const size of sizes) {
      const { copyMs, buildMs } = await load(db, corpus, size);
      const exact = await timeSearches(queries.slice(0, 5), "exact").then(() => timeSearches(queries, "exact"));
      await timeSearches(queries.slice(0, 5), "auto");
      console.log(`\n${size} chunks: binary COPY ${(copyMs / 1000).toFixed(1)} s (${Math.round(size / (copyMs / 1000))} rows/s), HNSW build ${(buildMs / 1000).toFixed(1)} s`);
      console.log(`  exact scan (baseline)  p50 ${exact.p50.toFixed(1)} ms  p95 ${exact.p95.toFixed(1)} ms  recall@10 1.000`);
      for (const ef of [40, undefined]) {
        const hnsw = await timeSearches(queries, "auto", ef);
        const label = ef === undefined ? "HNSW ef_search 100 (API)" : `HNSW ef_search ${ef}      `;
        console.log(
          `  ${label} p50 ${hnsw.p50.toFixed(1)} ms  p95 ${hnsw.p95.toFixed(1)} ms  recall@10 ${recall(hnsw.results, exact.results).toFixed(3)}  speed-up x${(exact.p50 / hnsw.p50).toFixed(1)} (p50)`,
        );
      }
    }
  });
}
