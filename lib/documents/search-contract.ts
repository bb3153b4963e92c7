import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { DocumentTypeSchema } from "./contract";
import { ModelName } from "./indexing-contract";

/** Longest query text searched; the body limit still applies to the whole request. */
export const MAX_QUERY_CHARS = 4000;
export const MAX_TOP_K = 100;

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

const TAGS = ["Documents"];

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
