import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { IdParams, DocumentRecord, DocumentStatus } from "./contract";

/** An embedding model's name, as indexing and search take it. */
export const ModelName = z.string().trim().min(1, "The model name cannot be empty").max(200);

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

export const getEmbeddingConfig = defineEndpoint({
  method: "get",
  path: "/api/v1/documents/embedding-config",
  summary: "Active embedding provider and model, and how many indexes are stale",
  description: "Never includes a key. When `configured` is false, search and indexing answer 503 with `reason`.",
  tags: TAGS,
  access: "user",
  response: EmbeddingConfig,
});
