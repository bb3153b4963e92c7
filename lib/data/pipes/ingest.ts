import "server-only";
import crypto from "node:crypto";
import fs from "node:fs";
import { Readable, Transform } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { z } from "zod";
import type { Principal } from "@/lib/access/roles";
import { withTenant } from "@/lib/db/tenant";
import { Forbidden, Invalid, NotFound, Unavailable, UnsupportedType } from "@/lib/errors";
import { processSingleton } from "@/lib/process-singleton";
import { FairQueue, QueueDeadline } from "@/lib/query/fair-queue";
import { openRowSource } from "@/lib/data/formats";
import { spool } from "@/lib/data/formats/spool";
import { loadTable } from "@/lib/data/load";
import { findTableEntry } from "@/lib/data/tables";
import { sourceLimits } from "@/lib/data/limits";
import type { IngestQuery, IngestResult } from "@/lib/data/pipes-contract";
import { columnsFor } from "./columns";

/*
 * A pipeline's batch of rows (issue 42 §6, docs/data.md "Pipelines"): the body streams to a temporary file under the
 * organization's file limits (its SHA-256 taken on the way, never held in memory), then into the table through the
 * one loader (lib/data/load.ts) in one transaction, with the batch's Idempotency-Key recorded in that same
 * transaction: a batch is loaded and recorded, or neither.
 */

/** printable ASCII without spaces at the ends, as the IETF draft and Stripe take them (a UUID fits). */
const IDEMPOTENCY_KEY = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

/**
 * Loads of one process, shared fairly between organizations (the user-SQL slots' queue, lib/query/fair-queue.ts):
 * a pipeline flooding one organization waits its turn while another's batch takes the next free slot. A batch that
 * waited INGEST_WAIT_MS is answered 503 with Retry-After, as the user SQL's queue answers.
 */
const INGEST_QUEUE = { total: 4, perKey: 2, deadlineMs: 20_000 } as const;
const RETRY_AFTER_SECONDS = 5;
export const ingestQueue = processSingleton("data ingest queue", () => new FairQueue(INGEST_QUEUE));

export interface IngestInput {
  table: string;
  query: z.output<typeof IngestQuery>;
  contentType: string | null;
  idempotencyKey: string | null;
  body: WebReadableStream<Uint8Array> | ReadableStream<Uint8Array> | null;
}

/** The body's format: the query's, else its Content-Type's; 415 for anything else. */
function formatOf(input: IngestInput): { format: "csv" | "ndjson"; delimiter?: string } {
  const type = (input.contentType ?? "").split(";")[0].trim().toLowerCase();
  const format =
    input.query.format ??
    (type === "text/csv" || type === "text/tab-separated-values" ? "csv" : ["application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines"].includes(type) ? "ndjson" : null);
  if (!format) throw new UnsupportedType(`Send CSV (Content-Type: text/csv) or NDJSON (application/x-ndjson), or say which with ?format= (got '${type || "none"}')`);
  const delimiter = input.query.delimiter ?? (type === "text/tab-separated-values" ? "\t" : undefined);
  return { format, delimiter };
}

function checkKey(key: string | null): void {
  if (key !== null && !IDEMPOTENCY_KEY.test(key)) {
    throw new Invalid([{ loc: ["header", "Idempotency-Key"], msg: "1 to 255 printable ASCII characters, not starting or ending with a space", type: "value_error" }]);
  }
}

/** The stored answer of a key, or null; the same key with another body is refused. */
async function recorded(principal: Principal, key: string, sha256: string): Promise<IngestResult | null> {
  const batch = await withTenant({ orgId: principal.orgId }, (tx) => tx.dataIngestBatch.findUnique({ where: { orgId_idempotencyKey: { orgId: principal.orgId, idempotencyKey: key } } }));
  if (!batch) return null;
  if (batch.bodySha256 !== sha256) {
    throw new Invalid([{ loc: ["header", "Idempotency-Key"], msg: `This key was used by another batch (loaded into "${batch.tableName}" at ${batch.createdAt.toISOString()}); send a new key for a new batch`, type: "idempotency_key_reused" }]);
  }
  return { ...(batch.result as IngestResult), replayed: true };
}

const isUniqueViolation = (error: unknown) => ["23505", "P2002"].includes(String((error as { code?: unknown })?.code));

export async function ingestRows(principal: Principal, input: IngestInput): Promise<IngestResult> {
  checkKey(input.idempotencyKey);
  const { format, delimiter } = formatOf(input);
  if (!input.body) throw new Invalid([{ loc: ["body"], msg: "The batch is empty: send the rows as the request body", type: "missing" }]);
  const limits = sourceLimits();
  const hash = crypto.createHash("sha256");
  let bytes = 0;
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      bytes += chunk.length;
      callback(null, chunk);
    },
  });
  const body = Readable.fromWeb(input.body as WebReadableStream<Uint8Array>).pipe(hashing);
  const spooled = await spool(body, limits.maxBytes, `batch.${format}`);
  try {
    const sha256 = hash.digest("hex");
    const key = input.idempotencyKey;
    if (key) {
      const earlier = await recorded(principal, key, sha256);
      if (earlier) return earlier;
    }
    try {
      return await ingestQueue.get().run(principal.orgId, () => load(principal, input, { file: spooled.file, format, delimiter, bytes, sha256 }));
    } catch (error) {
      if (error instanceof QueueDeadline) throw new Unavailable("This organization's loads are queued too long; retry the same batch with the same Idempotency-Key", RETRY_AFTER_SECONDS);
      // Another request with the same key committed first (the key's row is written with the rows): its answer is this one's.
      if (key && isUniqueViolation(error)) {
        const earlier = await recorded(principal, key, sha256);
        if (earlier) return earlier;
      }
      throw error;
    }
  } finally {
    await spooled.release();
  }
}

async function load(principal: Principal, input: IngestInput, batch: { file: string; format: "csv" | "ndjson"; delimiter?: string; bytes: number; sha256: string }): Promise<IngestResult> {
  // The caller's own scope: a location-limited admin or key writes only rows its locations' policy lets it.
  const scope = principal;
  const entry = await withTenant(scope, (tx) => findTableEntry(tx, input.table));
  if (!entry) throw new NotFound(`Table "${input.table}" not found; create it from a file first (POST /api/v1/data/uploads)`);
  const open = () => openRowSource(fs.createReadStream(batch.file), { format: batch.format, delimiter: batch.delimiter, limits: sourceLimits() });
  const source = await open();
  const columns = await columnsFor(entry, source.header, { addNewColumns: input.query.add_new_columns, inferFrom: open });
  const loadedAt = new Date();
  const key = input.idempotencyKey;
  const report = await loadTable(
    scope,
    {
      table: input.table,
      mode: input.query.mode,
      columns,
      keyColumns: input.query.mode === "upsert" ? entry.keyColumns : undefined,
      onBadRow: input.query.on_bad_row,
      addNewColumns: input.query.add_new_columns,
      actor: principal,
      withinLoad: key
        ? async (tx, done) => {
            await tx.exec(
              "INSERT INTO data_ingest_batches (org_id, idempotency_key, table_name, body_sha256, result, created_by, created_at) VALUES (quarry_current_org(), $1, $2, $3, $4::jsonb, $5, $6)",
              [key, input.table, batch.sha256, JSON.stringify(resultOf(input, done, batch.bytes, key, loadedAt)), principal.userId, loadedAt],
            );
          }
        : undefined,
    },
    source,
  ).catch((error: unknown) => {
    if (isPolicyRefusal(error)) {
      throw new Forbidden(`The batch holds rows for locations outside yours (the table's location column "${entry.location?.name}"); nothing was loaded`);
    }
    throw error;
  });
  return resultOf(input, report, batch.bytes, key, loadedAt);
}

/** The table's location policy refused a row (PostgreSQL's insufficient_privilege from row-level security). */
const isPolicyRefusal = (error: unknown) => (error as { code?: unknown })?.code === "42501" && /row-level security/.test((error as Error).message);

function resultOf(input: IngestInput, report: Awaited<ReturnType<typeof loadTable>>, bytes: number, key: string | null, loadedAt: Date): IngestResult {
  return {
    table: input.table,
    mode: input.query.mode,
    rows_loaded: report.rowsLoaded,
    rows_skipped: report.rowsSkipped,
    skipped: report.badRows.map((b) => ({ row: b.row, column: b.column, value: b.value, message: b.message })),
    bytes,
    idempotency_key: key,
    replayed: false,
    loaded_at: loadedAt.toISOString(),
  };
}
