import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";

/*
 * The pipelines' API (issue 42 §5, §6; docs/data.md "Pipelines"): rows posted by a pipeline, and pulls from where an
 * organization's data already lives. Admins, and API keys with `data:write`.
 */

const tags = ["Data"];
const ts = z.iso.datetime().describe("ISO 8601, UTC");
const TableParams = z.object({ name: z.string().min(1).max(63).describe("The table's stable name") });
const IdParams = z.object({ id: z.string().min(1).max(100) });

/** Query flags as a client writes them: `true`/`false` or `1`/`0`. */
const flag = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

export const IngestQuery = z.object({
  mode: z.enum(["append", "upsert"]).default("append").describe("append: add the rows; upsert: insert or replace rows by the table's key columns"),
  format: z.enum(["csv", "ndjson"]).optional().describe("The body's format; from Content-Type when absent (text/csv, application/x-ndjson)"),
  delimiter: z.string().length(1).optional().describe("CSV: the delimiter; detected from the header line when absent"),
  on_bad_row: z.enum(["fail", "skip"]).default("fail").describe("fail: a row that does not fit its column refuses the whole batch (422); skip: load the others and report each"),
  add_new_columns: flag.default(false).describe("A column the table does not have yet is added (its type inferred) instead of refused"),
});

export const IngestResult = z
  .object({
    table: z.string(),
    mode: z.enum(["append", "upsert"]),
    rows_loaded: z.number().int(),
    rows_skipped: z.number().int(),
    skipped: z.array(z.object({ row: z.number().int(), column: z.string().optional(), value: z.string().nullable().optional(), message: z.string() })).describe("each row left out (on_bad_row=skip)"),
    bytes: z.number().int().describe("bytes of the request body"),
    idempotency_key: z.string().nullable(),
    replayed: z.boolean().describe("true: this key's batch was loaded by an earlier request, whose result this is; nothing was loaded now"),
    loaded_at: ts,
  })
  .meta({ id: "IngestResult" });
export type IngestResult = z.infer<typeof IngestResult>;

export const ingestRows = defineEndpoint({
  method: "post",
  path: "/api/v1/data/tables/{name}/rows",
  summary: "Load a batch of rows into a table (CSV or NDJSON as the raw body, streamed)",
  description:
    "The body streams into the table (COPY); nothing of a refused batch is kept. Send an `Idempotency-Key` header (1-255 printable characters, e.g. a UUID) per batch: the key is recorded in the same transaction as the rows, so a retried batch is loaded once and a repeated request answers the first result (`replayed: true`, header `Idempotent-Replayed: true`); the same key with a different body is refused (422). Under pressure the answer is 429 (rate limit) or 503 (the organization's loads are queued too long), both with `Retry-After`: wait that many seconds and send the same batch with the same key.",
  tags,
  access: "admin",
  keyScope: "data:write",
  params: TableParams,
  query: IngestQuery,
  rawBody: true,
  response: IngestResult,
  rateLimit: { limit: 300, windowSeconds: 60 },
  sharedLimits: [{ name: "data ingest per organization", limit: 1200, windowSeconds: 60, key: ({ principal }) => principal?.orgId ?? null }],
  errors: [404, 409, 413, 415, 422, 429, 503],
});

const Identifier = z
  .string()
  .regex(/^[a-z_][a-z0-9_]{0,62}$/, "lowercase letters, digits and '_', starting with a letter or '_', at most 63 characters");
const FileFormat = z.enum(["csv", "parquet"]);

/** What reaches a source, as an admin writes it. Secret parts are sealed at rest and never answered back. */
export const PullSourceInput = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("postgres"),
    url: z.string().min(1).max(2000).describe("postgres://user:password@host:port/database[?sslmode=require]; stored encrypted, never shown back"),
    query: z.string().trim().min(1).max(20_000).describe("One SELECT over the source database, run read-only"),
    cursor_column: Identifier.optional().describe("Incremental: each run loads only rows whose value in this column of the query is greater than the greatest loaded so far"),
  }),
  z.object({
    kind: z.literal("s3"),
    bucket: z.string().min(1).max(255),
    key: z.string().min(1).max(1024),
    region: z.string().min(1).max(64).default("us-east-1"),
    endpoint_url: z.url().max(2000).optional().describe("An S3-compatible server; the same outbound rules as webhooks"),
    access_key_id: z.string().min(1).max(256).optional(),
    secret_access_key: z.string().min(1).max(256).optional(),
    format: FileFormat,
    delimiter: z.string().length(1).optional(),
  }),
  z.object({
    kind: z.literal("gcs"),
    bucket: z.string().min(1).max(255),
    key: z.string().min(1).max(1024),
    credentials_json: z.string().min(2).max(20_000).describe("A service account's JSON key; stored encrypted, never shown back"),
    format: FileFormat,
    delimiter: z.string().length(1).optional(),
  }),
  z.object({
    kind: z.literal("https"),
    url: z.url().max(4000).describe("https only, a public host (the outbound rules of webhooks); stored encrypted, never shown back"),
    authorization: z.string().min(1).max(4000).optional().describe("Sent as the Authorization header; stored encrypted"),
    format: FileFormat,
    delimiter: z.string().length(1).optional(),
  }),
]);
export type PullSourceInput = z.infer<typeof PullSourceInput>;

/** What is shown of a source: enough to recognise it, nothing that reaches it. */
export const PullSourceView = z.object({
  kind: z.enum(["postgres", "s3", "gcs", "https"]),
  host: z.string().optional().describe("postgres, https, S3-compatible: the host name only"),
  database: z.string().optional(),
  query: z.string().optional(),
  cursor_column: z.string().optional(),
  bucket: z.string().optional(),
  key: z.string().optional(),
  region: z.string().optional(),
  format: FileFormat.optional(),
  delimiter: z.string().optional(),
});
export type PullSourceView = z.infer<typeof PullSourceView>;

const pullFields = {
  name: z.string().trim().min(1).max(200),
  table: Identifier.describe("The table it loads: created by the first run (types from the source) when it does not exist"),
  mode: z.enum(["append", "replace", "upsert"]).describe("replace: the table becomes the source's rows (atomic swap); append: rows added; upsert: by key_columns"),
  key_columns: z.array(Identifier).max(16).default([]),
  cron: z.string().trim().min(1).max(120).nullable().default(null).describe("Five-field cron read in the organization's time zone; null: manual runs only"),
  paused: z.boolean().default(false),
};

export const PullCreate = z
  .object({ ...pullFields, source: PullSourceInput })
  .refine((p) => p.mode !== "upsert" || p.key_columns.length > 0, { message: "upsert needs key_columns", path: ["key_columns"] })
  .meta({ id: "DataPullCreate" });

export const PullUpdate = z
  .object({
    name: pullFields.name,
    cron: pullFields.cron,
    paused: pullFields.paused,
    mode: pullFields.mode,
    key_columns: pullFields.key_columns,
    source: PullSourceInput.describe("Replaces the source whole (its secrets are never shown, so they are sent again)"),
  })
  .partial()
  .meta({ id: "DataPullUpdate" });

export const PullRunRecord = z
  .object({
    id: z.string(),
    pull_id: z.string(),
    trigger: z.enum(["cron", "manual"]),
    status: z.enum(["queued", "running", "succeeded", "failed"]),
    attempts: z.number().int(),
    rows_loaded: z.number().int(),
    bytes_read: z.number().int(),
    cursor_from: z.string().nullable(),
    cursor_to: z.string().nullable(),
    error: z.string().nullable(),
    scheduled_for: ts,
    started_at: ts.nullable(),
    finished_at: ts.nullable(),
  })
  .meta({ id: "DataPullRun" });

export const PullRecord = z
  .object({
    id: z.string(),
    name: z.string(),
    table: z.string(),
    mode: z.enum(["append", "replace", "upsert"]),
    key_columns: z.array(z.string()),
    source: PullSourceView,
    cron: z.string().nullable(),
    time_zone: z.string().describe("The organization's: the zone cron is read in"),
    next_run_at: ts.nullable(),
    paused: z.boolean(),
    cursor_value: z.string().nullable().describe("Incremental pulls: the greatest cursor value loaded so far"),
    last_run: PullRunRecord.nullable(),
    created_by: z.string(),
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: "DataPull" });

export const listPulls = defineEndpoint({
  method: "get",
  path: "/api/v1/data/pulls",
  summary: "The organization's pulls",
  tags,
  access: "admin",
  keyScope: "data:write",
  response: z.object({ items: z.array(PullRecord) }),
});

export const createPull = defineEndpoint({
  method: "post",
  path: "/api/v1/data/pulls",
  summary: "Name a source to pull from, manually or on a schedule",
  description: "The source's host is checked against the outbound rules of webhooks (no private, loopback or internal address unless allow-listed) when saved and before every run.",
  tags,
  access: "admin",
  keyScope: "data:write",
  body: PullCreate,
  response: PullRecord,
  status: 201,
  errors: [409, 422],
});

export const getPull = defineEndpoint({
  method: "get",
  path: "/api/v1/data/pulls/{id}",
  summary: "One pull",
  tags,
  access: "admin",
  keyScope: "data:write",
  params: IdParams,
  response: PullRecord,
  errors: [404],
});

export const updatePull = defineEndpoint({
  method: "patch",
  path: "/api/v1/data/pulls/{id}",
  summary: "Change a pull",
  tags,
  access: "admin",
  keyScope: "data:write",
  params: IdParams,
  body: PullUpdate,
  response: PullRecord,
  errors: [404, 409, 422],
});

export const deletePull = defineEndpoint({
  method: "delete",
  path: "/api/v1/data/pulls/{id}",
  summary: "Delete a pull and its history (the table stays)",
  tags,
  access: "admin",
  keyScope: "data:write",
  params: IdParams,
  status: 204,
  errors: [404],
});

export const runPullNow = defineEndpoint({
  method: "post",
  path: "/api/v1/data/pulls/{id}/runs",
  summary: "Run a pull now (a durable job; follow it in its runs)",
  tags,
  access: "admin",
  keyScope: "data:write",
  params: IdParams,
  response: PullRunRecord,
  status: 202,
  errors: [404],
});

export const listPullRuns = defineEndpoint({
  method: "get",
  path: "/api/v1/data/pulls/{id}/runs",
  summary: "A pull's runs, newest first (the last 100)",
  tags,
  access: "admin",
  keyScope: "data:write",
  params: IdParams,
  response: z.object({ items: z.array(PullRunRecord) }),
  errors: [404],
});
