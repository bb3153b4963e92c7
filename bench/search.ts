// npm run bench -- search [sizes, default 10000,100000] [queries, default 50]: document search at
// 10k and 100k chunks of 384-dim vectors, through the same function as the API (searchTenantChunks: a
// tenant transaction, RLS, current-generation filter, join for titles and text): HNSW (the migration's partial
// index, iterative scan) against the baseline, an exact scan, with recall@10 of HNSW against exact.
//
// Vectors are clustered like real embeddings (topics -> documents -> chunks), not independent random
// ones: on those every point is about equally far from every other, and no approximate index can
// find "the" neighbours (DESIGN.md). Rows are loaded with binary COPY into a fresh file-backed PGlite
// in a temporary folder; the index is built after loading, as CREATE INDEX, with the migration's
// definition.
import type { Database } from "@/lib/db/client";
import { withRawTransaction } from "@/lib/db/bulk";
import { ChunkCopyWriter, CHUNK_COPY_COLUMNS } from "@/lib/documents/indexing/chunk-copy";
import { vectorLiteral } from "@/lib/documents/indexing/vector-indexes";
import { LOCAL_EMBEDDING_MODEL } from "@/lib/config/embedding-models";
import { DEFAULT_EF_SEARCH, searchTenantChunks, type ChunkSearch } from "@/lib/documents/search/search";
import { benchEngines, positional, withScratchDb } from "./lib/scratch-db";

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
export class Corpus {
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

const WORDS = "revenue margin warehouse order customer product refund policy invoice shipment delivery forecast quarter budget inventory supplier contract payment discount region".split(" ");
/** About 40 words of text per chunk: real chunks are ~500 words, but the text only matters to hybrid search, which this bench does not time. */
function chunkText(n: number): string {
  const words: string[] = [];
  for (let i = 0; i < 40; i++) words.push(WORDS[(n * 7 + i * 13) % WORDS.length]);
  return words.join(" ");
}

/** Loads `size` chunks with binary COPY (as the owner: a bench load, not a tenant write) and builds the HNSW index after. */
async function load(db: Database, corpus: Corpus, size: number): Promise<{ copyMs: number; buildMs: number }> {
  await db.system.exec(`DROP INDEX IF EXISTS ${INDEX_NAME}`);
  await db.system.query("DELETE FROM document_chunks WHERE org_id = $1", [ORG]);
  let copyMs = 0;
  // 10k rows per COPY: one buffer of every row would be copied whole into PGlite's WebAssembly memory.
  for (let from = 0; from < size; from += 10_000) {
    const writer = new ChunkCopyWriter();
    for (let i = from; i < Math.min(size, from + 10_000); i++) {
      const d = i % DOCUMENTS;
      const ordinal = Math.floor(i / DOCUMENTS);
      writer.add({
        orgId: ORG, documentId: `doc_bench_${d}`, generation: 1, ordinal, text: chunkText(i), wordStart: ordinal * 450, wordEnd: ordinal * 450 + 500,
        pageStart: null, pageEnd: null, rowStart: null, rowEnd: null, model: LOCAL_EMBEDDING_MODEL, embedding: corpus.chunk(d),
      });
    }
    const data = writer.finish();
    const started = performance.now();
    await withRawTransaction(db, async (tx) => {
      // Loading only: per-row foreign-key checks (every row's document exists, inserted above) would dominate the load.
      // (PGlite's superuser may switch them off; a PostgreSQL owner role may not, and checks them natively.)
      if (db.kind === "pglite") await tx.exec("SET LOCAL session_replication_role = replica");
      if (!tx.copyBinary) throw new Error("this database connection cannot COPY");
      await tx.copyBinary(`document_chunks (${CHUNK_COPY_COLUMNS.join(", ")})`, data);
    });
    copyMs += performance.now() - started;
  }
  const started = performance.now();
  await withRawTransaction(db, async (tx) => {
    // The graph of 100k x 384 fits in memory with this; the default 64 MB makes the build spill and crawl.
    await tx.exec("SET LOCAL maintenance_work_mem = '1GB'");
    // A 100k build takes minutes on a busy machine: past the embedded engine's default limit of 120 s.
    await tx.exec("SET LOCAL statement_timeout = '1800s'");
    await tx.exec(`CREATE INDEX ${INDEX_NAME} ON document_chunks USING hnsw ((embedding::vector(${DIMS})) vector_cosine_ops) WHERE model = '${LOCAL_EMBEDDING_MODEL}'`);
  });
  const buildMs = performance.now() - started;
  await db.system.exec("ANALYZE document_chunks; ANALYZE documents");
  return { copyMs, buildMs };
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

interface Timed { p50: number; p95: number; results: string[][] }

interface Run { ms: number; ids: string[] }

function timed(runs: Run[]): Timed {
  const ms = runs.map((r) => r.ms);
  return { p50: percentile(ms, 50), p95: percentile(ms, 95), results: runs.map((r) => r.ids) };
}

/** One search as the API runs it. */
async function searchOnce(q: Float64Array, strategy: "auto" | "exact", efSearch?: number): Promise<Run> {
  const search: ChunkSearch = { vector: Array.from(q), queryText: "", model: LOCAL_EMBEDDING_MODEL, dims: DIMS, topK: TOP_K, documentIds: null, mode: "vector", strategy, efSearch };
  const started = performance.now();
  const hits = await searchTenantChunks({ orgId: ORG }, search);
  return { ms: performance.now() - started, ids: hits.map((h) => h.chunk_id) };
}

async function timeSearches(queries: Float64Array[], strategy: "auto" | "exact", efSearch?: number): Promise<Timed> {
  const runs: Run[] = [];
  for (const q of queries) runs.push(await searchOnce(q, strategy, efSearch));
  return timed(runs);
}

/** The same top-k through the HNSW index with bare SQL: owner, no RLS, no generation filter, no joins, one transaction per query. */
async function bareOnce(db: Database, q: Float64Array, efSearch: number): Promise<Run> {
  const literal = vectorLiteral(Array.from(q));
  const started = performance.now();
  const rows = await withRawTransaction(db, async (tx) => {
    await tx.exec(`SET LOCAL hnsw.ef_search = ${efSearch}`);
    // Through the index whatever the planner's estimate (at 10k rows and a large ef_search it prefers a scan).
    await tx.exec("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off");
    return tx.query<{ id: bigint | string }>(
      `SELECT id FROM document_chunks WHERE model = '${LOCAL_EMBEDDING_MODEL}' ORDER BY embedding::vector(${DIMS}) <=> $1::vector(${DIMS}) LIMIT ${TOP_K}`,
      [literal],
    );
  });
  return { ms: performance.now() - started, ids: rows.map((r) => String(r.id)) };
}

/**
 * Each query through bare SQL and through the API one right after the other, the order alternating:
 * a stretch in which this shared machine slows down then weighs on both sides alike.
 */
async function timeBareAndApi(db: Database, queries: Float64Array[], efSearch: number, apiEf: number | undefined): Promise<{ bare: Timed; api: Timed }> {
  const bare: Run[] = [];
  const api: Run[] = [];
  for (const [i, q] of queries.entries()) {
    if (i % 2 === 0) {
      bare.push(await bareOnce(db, q, efSearch));
      api.push(await searchOnce(q, "auto", apiEf));
    } else {
      api.push(await searchOnce(q, "auto", apiEf));
      bare.push(await bareOnce(db, q, efSearch));
    }
  }
  return { bare: timed(bare), api: timed(api) };
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

const fmt = (t: Timed) => `p50 ${t.p50.toFixed(1).padStart(6)} ms  p95 ${t.p95.toFixed(1).padStart(6)} ms`;

async function benchEngine(db: Database, sizes: number[], queryCount: number, efs: number[]): Promise<void> {
  if (db.kind === "postgres") {
    const others = await db.system.query<{ n: number }>("SELECT count(*)::int AS n FROM document_chunks WHERE org_id <> $1", [ORG]);
    if (others[0].n > 0) throw new Error("search bench on PostgreSQL drops and rebuilds the HNSW index: use a database with no other document chunks");
  }
  await db.system.query("INSERT INTO organizations (id, slug, name) VALUES ($1, 'bench', 'Bench') ON CONFLICT DO NOTHING", [ORG]);
  await db.system.exec(
    `INSERT INTO documents (id, org_id, title, filename, content_type, extension, created_by, status, index_generation, index_model, index_dims)
     SELECT 'doc_bench_' || d, '${ORG}', 'Document ' || d, 'document-' || d || '.txt', 'text/plain', 'txt', 'bench', 'indexed', 1, '${LOCAL_EMBEDDING_MODEL}', ${DIMS}
     FROM generate_series(0, ${DOCUMENTS - 1}) d ON CONFLICT DO NOTHING`,
  );
  const corpus = new Corpus();
  const queries = Array.from({ length: queryCount }, () => corpus.query());
  const engine = db.kind === "pglite" ? "PGlite (pgvector 0.8)" : "PostgreSQL (QUARRY_TEST_DATABASE_URL)";
  console.log(`\n== ${engine}: ${DIMS}-dim clustered vectors (${TOPICS} topics, ${DOCUMENTS} documents), top ${TOP_K}, ${queryCount} queries`);
  try {
    for (const size of sizes) {
      const { copyMs, buildMs } = await load(db, corpus, size);
      await timeSearches(queries.slice(0, 5), "exact");
      const exact = await timeSearches(queries, "exact");
      await timeSearches(queries.slice(0, 5), "auto");
      console.log(`\n${size} chunks: binary COPY ${(copyMs / 1000).toFixed(1)} s (${Math.round(size / (copyMs / 1000))} rows/s), HNSW build ${(buildMs / 1000).toFixed(1)} s`);
      console.log(`  exact scan, API SQL            ${fmt(exact)}  recall@10 1.000`);
      for (const ef of efs) {
        const { bare, api } = await timeBareAndApi(db, queries, ef, ef === efs[0] ? undefined : ef);
        const label = ef === efs[0] ? `ef_search ${ef} (API default)` : `ef_search ${ef}`;
        console.log(`  ${label.padEnd(26)} bare ${fmt(bare)}  recall@10 ${recall(bare.results, exact.results).toFixed(3)}`);
        console.log(
          `  ${"".padEnd(26)} API  ${fmt(api)}  recall@10 ${recall(api.results, exact.results).toFixed(3)}  p95 API/bare x${(api.p95 / bare.p95).toFixed(2)} (aim <= 1.5)`,
        );
      }
    }
  } finally {
    if (db.kind === "postgres") {
      await db.system.query("DELETE FROM document_chunks WHERE org_id = $1", [ORG]);
      await db.system.query("DELETE FROM documents WHERE org_id = $1", [ORG]);
      await db.system.query("DELETE FROM organizations WHERE id = $1", [ORG]);
      await db.system.exec(`DROP INDEX IF EXISTS ${INDEX_NAME}`);
      await db.system.exec(`CREATE INDEX ${INDEX_NAME} ON document_chunks USING hnsw ((embedding::vector(${DIMS})) vector_cosine_ops) WHERE model = '${LOCAL_EMBEDDING_MODEL}'`);
    }
  }
}

export default async function bench(args: string[]): Promise<void> {
  const [sizeArg, queryArg] = positional(args, ["--engine", "--ef"]);
  const sizes = (sizeArg ?? "10000,100000").split(",").map(Number);
  const queryCount = Number(queryArg ?? 50);
  const efAt = args.indexOf("--ef");
  const extraEfs = efAt >= 0 ? args[efAt + 1].split(",").map(Number) : [40, 100];
  const efs = [DEFAULT_EF_SEARCH, ...extraEfs.filter((e) => e !== DEFAULT_EF_SEARCH)];
  console.log("search bench: the API's search SQL (tenant transaction, RLS, current generation, titles) beside the same top-k through the HNSW index with bare SQL");
  for (const engine of benchEngines(args)) {
    await withScratchDb("search", (db) => benchEngine(db, sizes, queryCount, efs), engine);
  }
}
