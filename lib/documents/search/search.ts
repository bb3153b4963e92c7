import "server-only";
import type { Principal } from "@/lib/access/roles";
import { withTenantBulk, type BulkTx } from "@/lib/db/bulk";
import { Prisma } from "@/lib/db/generated/client";
import type { TenantScope, TenantTx } from "@/lib/db/tenant";
import { LOCAL_EMBEDDING_MODEL, getEmbedder } from "@/lib/embeddings";
import { unprocessable } from "@/lib/errors";
import { locatePassage } from "./page-locator";
import { isRelevant, relevanceOf } from "./relevance";
import type { DocumentType } from "../file-types";
import { SearchRequest, type SearchHit, type SearchResponse } from "../search-contract";
import { vectorLiteral, vectorPlan } from "../indexing/vector-indexes";

/**
 * HNSW candidate list size for a top-10 search. The index's graph (m 16, ef_construction 64) links
 * clusters of similar chunks sparsely, so a short candidate list can settle in the wrong cluster and
 * miss every true neighbour of a query: at 100k chunks ef_search 40 and 100 both gave recall@10 0.93,
 * and no value in between changes which queries fail (bench/search.ts). The setting does reach the
 * query (SET LOCAL in the tenant transaction); it was too small.
 */
export const DEFAULT_EF_SEARCH = 200;

/** Reciprocal rank fusion constant (Cormack et al.; the usual 60). */
export const RRF_K = 60;

/**
 * Searches the caller's organization: embeds the query (outside any
 * transaction: the provider may be slow) and ranks the current index's
 * chunks of that model. Row-level security limits every row to the
 * caller's organization, so ids of other organizations match nothing.
 */
export async function searchDocuments(principal: Principal, req: SearchRequest): Promise<SearchResponse> {
  const parsed = SearchRequest.safeParse(req);
  if (!parsed.success) {
    throw unprocessable(parsed.error.issues.map((i) => ({ loc: ["body", ...i.path.map((p) => (typeof p === "number" ? p : String(p)))], msg: i.message, type: i.code })));
  }
  const request = parsed.data;
  const embedder = getEmbedder(request.model);
  const head = { model: embedder.model, dims: embedder.dims, mode: request.mode };
  if (request.document_ids !== null && request.document_ids.length === 0) return { ...head, results: [] };
  const vector = await embedder.embedQuery(request.query);
  const results = await searchTenantChunks(principal, { vector, model: embedder.model, dims: embedder.dims, topK: request.top_k, documentIds: request.document_ids, mode: request.mode, queryText: request.query });
  // The relevance floor (docs/search.md "Relevance"), in both modes: a passage that holds too few of the query's
  // words, and that a semantic model does not find close either, is no match whatever its rank.
  const semantic = isSemantic(embedder.model);
  return { ...head, results: results.filter((hit) => isRelevant(hit, semantic)) };
}

/**
 * The search as the API runs it: one tenant transaction on a raw connection (withTenantBulk, which
 * sets the tenant context exactly as withTenant does, with nothing to stage), the HNSW settings in
 * one round trip and the ranking query sent as it is. Through Prisma the same search took two more
 * round trips and Prisma's own work per statement, which at 100k chunks made its p95 1.6x the bare
 * SQL's (docs/performance.md, "Search").
 */
export function searchTenantChunks(scope: TenantScope, search: ChunkSearch): Promise<SearchHit[]> {
  return withTenantBulk(scope, async () => undefined, (tx) => runSearch(rawSearchSql(tx), search));
}

export interface ChunkSearch {
  vector: readonly number[];
  model: string;
  dims: number;
  topK: number;
  /** null: every document. */
  documentIds: readonly string[] | null;
  mode: "vector" | "hybrid";
  /** The query's text, for the full-text side of hybrid search. */
  queryText: string;
  /** "exact" forces a sequential scan (benchmarks compare it with the index). */
  strategy?: "auto" | "exact";
  /** HNSW candidate list size; defaults to enough for the requested depth. */
  efSearch?: number;
}

interface HitRow {
  id: bigint | string;
  document_id: string;
  title: string;
  filename: string;
  extension: string;
  ordinal: number;
  text: string;
  page_start: number | null;
  page_end: number | null;
  row_start: number | null;
  row_end: number | null;
  word_start: number;
  word_end: number;
  score: number;
  similarity: number;
  keyword_match: boolean;
  term_coverage: number;
  terms_matched: number;
}

/**
 * The ranking itself, inside a tenant transaction. Only chunks of each
 * document's current generation count, so a running or failed re-index is
 * never visible. HNSW scans use iterative scanning (relaxed order, re-sorted
 * here) so tenant and document filters that discard neighbours do not cut
 * results short.
 */
export function searchChunks(tx: TenantTx, search: ChunkSearch): Promise<SearchHit[]> {
  return runSearch(prismaSearchSql(tx), search);
}

/** What the search needs from a tenant transaction: session settings, then one query. */
interface SearchSql {
  /** `SET LOCAL` statements, in order. */
  setLocal(statements: string[]): Promise<void>;
  /** `reusable`: the query's text is one of a small fixed set, worth preparing on the connection. */
  rows<T>(query: Prisma.Sql, reusable: boolean): Promise<T[]>;
}

function prismaSearchSql(tx: TenantTx): SearchSql {
  return {
    setLocal: async (statements) => {
      // Prisma sends one statement per call.
      for (const statement of statements) await tx.$executeRawUnsafe(statement);
    },
    // As a template with the query nested (Prisma flattens it), the form tests intercept.
    rows: (query) => tx.$queryRaw`${query}`,
  };
}

function rawSearchSql(tx: BulkTx): SearchSql {
  return {
    // Without parameters node-postgres uses the simple protocol, which takes several statements at once.
    setLocal: async (statements) => void (await tx.exec(statements.join("; "))),
    // Raw pg returns int8 as a string, Prisma as a bigint; toHit takes either.
    // Prepared, the search's query took 3.7-4.2 ms at 10k chunks instead of 5.1-6.0 on PostgreSQL
    // (6.6-7.7 instead of 8.9-10.0 on PGlite): no parsing, rewriting for RLS or planning each time.
    rows: (query, reusable) => (reusable ? tx.queryPrepared(query.text, query.values) : tx.query(query.text, query.values)),
  };
}

async function runSearch(sql: SearchSql, search: ChunkSearch): Promise<SearchHit[]> {
  const plan = vectorPlan(search.model, search.dims, search.strategy);
  // Hybrid fuses two candidate lists; deeper lists let either side promote a chunk the other ranks low.
  const depth = limitStep(search.mode === "hybrid" ? Math.min(200, Math.max(50, search.topK * 4)) : search.topK);
  const fusedLimit = limitStep(search.topK);
  const limit = (n: number) => Prisma.raw(String(n));
  // Index searches over every document are the common case, and have few texts: prepare those.
  const reusable = plan.strategy === "hnsw" && search.documentIds === null;
  if (plan.strategy === "hnsw") {
    const ef = Math.trunc(search.efSearch ?? Math.min(1000, Math.max(DEFAULT_EF_SEARCH, depth * 2)));
    // SET LOCAL: inside the tenant transaction, so the setting reaches this query and ends with it
    // (the tenant role may not call set_config, migration 0007). `ef` is an integer.
    await sql.setLocal([`SET LOCAL hnsw.ef_search = ${ef}`, "SET LOCAL hnsw.iterative_scan = relaxed_order"]);
  }
  const query = Prisma.sql`${vectorLiteral(search.vector)}${plan.cast}`;
  const distance = Prisma.sql`(${plan.column} <=> ${query})`;
  const documentFilter =
    search.documentIds === null ? Prisma.empty : Prisma.sql`AND c.document_id IN (${Prisma.join(search.documentIds)})`;
  // Only each document's current generation. With an HNSW index: a per-row look-up rather than a join,
  // so the scan stays one ordered index scan whose filter iterative scanning extends past; "<=" is "="
  // here (a swap deletes older generations in its transaction, only a running index's newer one can
  // exist) and keeps the planner's row estimate (1/3, not 1/200) from turning the index scan into a
  // sort of everything. An exact scan reads every row anyway: a hash join is 3x cheaper than the look-up.
  const current =
    plan.strategy === "hnsw"
      ? { from: Prisma.sql`document_chunks c`, filter: Prisma.sql`AND c.generation <= (SELECT d.index_generation FROM documents d WHERE d.id = c.document_id)` }
      : { from: Prisma.sql`document_chunks c JOIN documents d ON d.id = c.document_id AND d.index_generation = c.generation`, filter: Prisma.empty };

  // Share of the query's words (stemmed, stop words dropped) that the chunk contains, for the few rows returned.
  const terms = Prisma.sql`unnest(tsvector_to_array(to_tsvector('english', ${search.queryText}))) l`;
  const coverage = Prisma.sql`(SELECT coalesce(avg((c.tsv @@ quote_literal(l)::tsquery)::int), 0)::float8 FROM ${terms}) AS term_coverage,
    (SELECT count(*) FILTER (WHERE c.tsv @@ quote_literal(l)::tsquery)::int FROM ${terms}) AS terms_matched`;
  const vectorCandidates = Prisma.sql`
    SELECT c.id, ${distance} AS distance
    FROM ${current.from}
    WHERE ${plan.modelFilter} ${documentFilter} ${current.filter}
    ORDER BY distance
    LIMIT ${limit(depth)}`;

  let rows: HitRow[];
  if (search.mode === "vector") {
    rows = await sql.rows<HitRow>(Prisma.sql`
      WITH hits AS MATERIALIZED (${vectorCandidates})
      SELECT c.id, c.document_id, d.title, d.filename, d.extension, c.ordinal, c.text, c.page_start, c.page_end,
             c.row_start, c.row_end, c.word_start, c.word_end, 1 - h.distance AS score, 1 - h.distance AS similarity, false AS keyword_match,
             ${coverage}
      FROM hits h JOIN document_chunks c ON c.id = h.id JOIN documents d ON d.id = c.document_id
      ORDER BY h.distance, c.id`, reusable);
  } else {
    rows = await sql.rows<HitRow>(Prisma.sql`
      WITH vec AS MATERIALIZED (${vectorCandidates}),
      vec_ranked AS (SELECT id, row_number() OVER (ORDER BY distance, id) AS rank FROM vec),
      kw AS MATERIALIZED (
        SELECT c.id, ts_rank(c.tsv, q) AS text_rank
        FROM ${current.from} CROSS JOIN websearch_to_tsquery('english', ${search.queryText}) q
        WHERE ${plan.modelFilter} ${documentFilter} AND c.tsv @@ q ${current.filter}
        ORDER BY text_rank DESC, c.id
        LIMIT ${limit(depth)}
      ),
      kw_ranked AS (SELECT id, row_number() OVER (ORDER BY text_rank DESC, id) AS rank FROM kw),
      fused AS (
        SELECT id, sum(1.0 / (${RRF_K} + rank))::float8 AS score
        FROM (SELECT id, rank FROM vec_ranked UNION ALL SELECT id, rank FROM kw_ranked) ranks
        GROUP BY id
        ORDER BY score DESC, id
        LIMIT ${limit(fusedLimit)}
      )
      SELECT c.id, c.document_id, d.title, d.filename, d.extension, c.ordinal, c.text, c.page_start, c.page_end,
             c.row_start, c.row_end, c.word_start, c.word_end, f.score, 1 - ${distance} AS similarity,
             EXISTS (SELECT FROM kw WHERE kw.id = f.id) AS keyword_match, ${coverage}
      FROM fused f JOIN document_chunks c ON c.id = f.id JOIN documents d ON d.id = c.document_id
      ORDER BY f.score DESC, c.id`, reusable);
  }
  return rows.slice(0, search.topK).map((row) => toHit(row, search));
}

/**
 * LIMITs are SQL literals, not parameters: with a parameter, a prepared statement's generic plan
 * expects a tenth of the table and joins it by hash (22 ms instead of 3 at 10k chunks, measured), so
 * PostgreSQL keeps planning each search. Rounded up to these steps, and the extra rows dropped, so a
 * connection prepares at most a dozen texts per model; a longer list only finds nearer neighbours.
 */
const LIMIT_STEPS = [5, 10, 20, 50, 100, 200];

function limitStep(n: number): number {
  return LIMIT_STEPS.find((step) => step >= n) ?? Math.ceil(n);
}

/** Whether a model's similarities mean closeness in meaning: every provider's but the offline word-matching embedder's. */
const isSemantic = (model: string) => model !== LOCAL_EMBEDDING_MODEL;

function toHit(row: HitRow, search: ChunkSearch): SearchHit {
  const query = search.queryText;
  const { text, page, rows, heading, passage } = locatePassage(row.text, { pageStart: row.page_start, rowStart: row.row_start, rowEnd: row.row_end }, query);
  const evidence = { keyword_match: row.keyword_match === true, term_coverage: Number(row.term_coverage), terms_matched: Number(row.terms_matched), similarity: Number(row.similarity) };
  return {
    chunk_id: String(row.id),
    document_id: row.document_id,
    document_title: row.title,
    filename: row.filename,
    extension: row.extension as DocumentType,
    ordinal: row.ordinal,
    score: Number(row.score),
    relevance: relevanceOf(evidence, isSemantic(search.model)),
    ...evidence,
    text,
    passage,
    page,
    rows,
    heading,
    page_start: row.page_start,
    page_end: row.page_end,
    row_start: row.row_start,
    row_end: row.row_end,
    word_start: row.word_start,
    word_end: row.word_end,
  };
}
