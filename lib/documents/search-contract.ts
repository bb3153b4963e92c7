import { z } from "zod";
import { defineEndpoint } from "@/lib/api/endpoint";
import { IdParams, DocumentRecord, DocumentStatus, DocumentTypeSchema } from "./contract";

/** Longest query text searched; the body limit still applies to the whole request. */
export const MAX_QUERY_CHARS = 4000;
export const MAX_TOP_K = 100;

const ModelName = z.string().trim().min(1, "The model name cannot be empty").max(200);

export const SearchMode = z
  .enum(["vector", "hybrid"])
  .describe("vector: cosine similarity only; hybrid: vector ranks and full-text (ts_rank) ranks fused by reciprocal rank (k = 60)")
  .meta({ id: "SearchMode" });

export const SearchRequest = z
  .object({
    query: z
      .string()
      .trim()
      .min(1, "The query is empty")
      .max(MAX_QUERY_CHARS, `The query is longer than ${MAX_QUERY_CHARS} characters`)
      .describe(`Text to search for, 1 to ${MAX_QUERY_CHARS} characters after trimming`),
    top_k: z.number().int().min(1).max(MAX_TOP_K).default(5).describe(`Number of chunks to return, 1 to ${MAX_TOP_K}`),
    document_ids: z
      .array(z.string().min(1).max(100))
      .max(1000, "At most 1000 document ids")
      .nullable()
      .default(null)
      .describe("Search only these documents; null searches every document of the organization, [] none. Ids of other organizations match nothing."),
    model: ModelName.nullable().default(null).describe("Embedding model; null uses the active one. Only chunks indexed with this model are searched."),
    mode: SearchMode.default("vector"),
  })
  .meta({ id: "SearchRequest" });
export type SearchRequest = z.input<typeof SearchRequest>;

export const SearchHit = z
  .object({
    chunk_id: z.string(),
    document_id: z.string(),
    document_title: z.string(),
    filename: z.string(),
    extension: DocumentTypeSchema,
    ordinal: z.number().int().describe("Position of the chunk in its document, from 0"),
    score: z
      .number()
      .describe("vector mode: cosine similarity (1 - cosine distance, -1..1); hybrid mode: the reciprocal-rank-fusion score, sum of 1/(60 + rank) over both rankings"),
    relevance: z
      .number()
      .min(0)
      .max(1)
      .describe(
        "The one scale to show (as a percentage), the same in both modes: the share of the query's words the passage holds (1 for a full-text match of every word), " +
          "or with a semantic embedding provider its cosine similarity when higher. Only matches are returned: see docs/search.md, Relevance",
      ),
    similarity: z.number().describe("Cosine similarity of the chunk to the query, in both modes"),
    keyword_match: z.boolean().describe("hybrid mode: the full-text search matched the chunk (every word of the query, stemmed); always false in vector mode"),
    term_coverage: z.number().describe("Share (0..1) of the query's words, stemmed and without stop words, that the chunk contains"),
    terms_matched: z.number().int().describe("How many of the query's words (stemmed, without stop words) the chunk contains"),
    text: z.string(),
    passage: z
      .string()
      .describe("The part of the chunk that matches the query best (a page's, a CSV row range's or a Word section's text inside it; the whole chunk when it has no parts): what a citation highlights"),
    page: z.number().int().nullable().describe("pdf only: the page (1-based) of the passage inside the chunk that matches the query best, where a link should open; page_start for chunks indexed before pages were mapped"),
    rows: z
      .object({ start: z.number().int(), end: z.number().int() })
      .nullable()
      .describe("csv only: the data rows (1-based, header excluded) of the best-matching passage inside the chunk; the chunk's row range for chunks indexed before rows were mapped"),
    heading: z
      .string()
      .nullable()
      .describe("docx only: the heading (a paragraph styled Heading 1-6) of the section holding the best-matching passage; null before the first heading or in a document without headings"),
    page_start: z.number().int().nullable().describe("First page (1-based) the chunk covers; pdf only"),
    page_end: z.number().int().nullable(),
    row_start: z.number().int().nullable().describe("First data row (1-based, header excluded) the chunk covers; csv only"),
    row_end: z.number().int().nullable(),
    word_start: z.number().int().describe("Offset of the chunk's first word in the document's text"),
    word_end: z.number().int().describe("Offset after the chunk's last word (exclusive)"),
  })
  .meta({ id: "SearchHit" });
export type SearchHit = z.infer<typeof SearchHit>;

export const SearchResponse = z
  .object({
    model: z.string(),
    dims: z.number().int(),
    mode: SearchMode,
    results: z
      .array(SearchHit)
      .describe(
        "Best first; only passages above the relevance floor (they hold half the query's words or two of them, the full-text search matched every word, " +
          "or a semantic provider's cosine similarity is at least 0.3), so fewer than top_k, or none, may come back",
      ),
  })
  .meta({ id: "SearchResponse" });
export type SearchResponse = z.infer<typeof SearchResponse>;

export const IndexQuery = z.object({
  model: ModelName.optional().describe("Embedding model to index with; the active one when omitted"),
});

export const IndexStatus = z
  .object({
    document_id: z.string(),
    state: z
      .enum(["none", "queued", "running", "done", "failed"])
      .describe("none: indexing was never requested; queued: waiting for a worker, a free slot of the organization or its next attempt; running: being indexed (progress); done: indexed; failed: given up, see reason"),
    status: DocumentStatus.describe("The document's status (its index: uploaded, indexing, indexed, failed)"),
    progress: z.object({ done: z.number().int(), total: z.number().int().describe("0 while the file is read and chunked") }).describe("Chunks embedded and stored by the running job"),
    attempts: z.number().int().describe("Attempts made for the current (or last) request"),
    max_attempts: z.number().int(),
    reason: z.string().nullable().describe("Why the last attempt failed or the job gave up, or what it waits for"),
    requested_at: z.iso.datetime().nullable(),
    next_attempt_at: z.iso.datetime().nullable(),
    chunk_count: z.number().int().describe("Chunks of the index in use"),
    indexed_at: z.iso.datetime().nullable(),
    links: z.object({ document: z.string(), status: z.string() }),
  })
  .meta({ id: "IndexStatus" });
export type IndexStatus = z.infer<typeof IndexStatus>;

const ModelInfo = z.object({ provider: z.string(), model: z.string(), dims: z.number().int() });

export const EmbeddingConfig = z
  .object({
    provider: z.string().describe("Active embedding provider"),
    model: z.string().describe("Active (default) embedding model"),
    dims: z.number().int(),
    configured: z.boolean().describe("false when the provider cannot be used (missing key...); reason says why"),
    reason: z.string().nullable(),
    available_models: z.array(ModelInfo).describe("Models usable now"),
    notice: z
      .object({
        message: z.string().describe('"no embedding provider configured: offline word-matching embedder in use"'),
        variable: z.literal("EMBEDDING_PROVIDER_CONFIG").describe("the environment variable that configures a provider (read at start)"),
      })
      .nullable()
      .describe("Set while the offline word-matching embedder is active (no provider configured): search works, but matches words rather than meaning"),
    vector_index: z.enum(["hnsw", "exact"]).describe("How the active model's vectors are searched: an HNSW index, or an exact scan (models without a migration-defined index)"),
    indexed_documents: z.number().int().describe("Documents of the organization that have a search index"),
    stale: z
      .object({
        model_changed: z.number().int().describe("Indexed with another model than the active one"),
        file_replaced: z.number().int().describe("The file was replaced after it was indexed"),
        total: z.number().int().describe("Documents stale for either reason"),
      })
      .describe("Documents that need re-indexing"),
  })
  .meta({ id: "EmbeddingConfig" });

const TAGS = ["Documents"];

export const indexDocument = defineEndpoint({
  method: "post",
  path: "/api/v1/documents/{id}/index",
  summary: "Index a document for search (extract, chunk, embed, store)",
  description:
    "Queues an index job and waits for it while the client stays connected, then answers the record with its chunk count " +
    "(the job goes on if the client leaves). With `Prefer: respond-async` it answers 202 at once with the IndexStatus and a " +
    "`Location` header to follow (GET …/index). Uploads queue this job themselves unless `?index=false`. While it runs, the record's status is `indexing` and " +
    "index_progress_done/total count embedded chunks. The new index replaces the previous one atomically; when indexing " +
    "fails, the previous index (if any) stays searchable. 409 while the document is already being indexed or has no file; " +
    "422 when no text can be extracted (the reason is also stored on the record); 429 with Retry-After when the embedding provider " +
    "is still rate-limiting after the retries (or this organization indexes too often); 502/503/504 from the embedding provider.",
  tags: TAGS,
  access: "admin",
  params: IdParams,
  query: IndexQuery,
  response: DocumentRecord,
  rateLimit: { limit: 30, windowSeconds: 60 },
  // Per organization as well as per admin: several admins indexing at once share the embedding provider's quota.
  sharedLimits: [{ name: "index-document", limit: 60, windowSeconds: 60, key: ({ principal }) => principal?.orgId ?? null }],
  errors: [404, 409, 422, 429, 502, 503, 504],
});

export const getIndexStatus = defineEndpoint({
  method: "get",
  path: "/api/v1/documents/{id}/index",
  summary: "The document's index job: queued, running (with progress), done or failed (with the reason)",
  tags: TAGS,
  access: "user",
  params: IdParams,
  response: IndexStatus,
  errors: [404],
});

export const removeDocumentIndex = defineEndpoint({
  method: "delete",
  path: "/api/v1/documents/{id}/index",
  summary: "Remove a document's search index",
  description: "Deletes every chunk of the document and answers the record (status back to `uploaded`). 409 while indexing runs.",
  tags: TAGS,
  access: "admin",
  params: IdParams,
  response: DocumentRecord,
  errors: [404, 409],
});

export const searchDocuments = defineEndpoint({
  method: "post",
  path: "/api/v1/documents/search",
  summary: "Search the organization's indexed documents",
  description:
    "Embeds the query with the model (the active one by default) and ranks the chunks indexed with that model by cosine " +
    "similarity (pgvector; HNSW per model), optionally fused with PostgreSQL full-text ranks (`mode: hybrid`). Only the " +
    "current index of each document is searched.",
  tags: TAGS,
  access: "user",
  // A search reads, though it is sent by POST.
  keyScope: "documents:read",
  body: SearchRequest,
  response: SearchResponse,
  rateLimit: { limit: 120, windowSeconds: 60 },
  errors: [422, 429, 502, 503, 504],
});

export const getEmbeddingConfig = defineEndpoint({
  method: "get",
  path: "/api/v1/documents/embedding-config",
  summary: "Active embedding provider and model, and how many indexes are stale",
  description: "Never includes a key. When `configured` is false, search and indexing answer 503 with `reason`.",
  tags: TAGS,
  access: "user",
  response: EmbeddingConfig,
});
