import "server-only";
import fs from "node:fs";
import type { TenantScope } from "@/lib/db/tenant";
import { withTenant } from "@/lib/db/tenant";
import type { DataPull, DataPullRun } from "@/lib/db/generated/client";
import type { BulkTx } from "@/lib/db/bulk";
import { DomainError } from "@/lib/errors";
import { log } from "@/lib/log";
import { openRowSource, type RowSource } from "@/lib/data/formats";
import { spool } from "@/lib/data/formats/spool";
import { loadTable, type LoadMode } from "@/lib/data/load";
import { findTableEntry } from "@/lib/data/tables";
import { sourceLimits } from "@/lib/data/limits";
import { columnsFor } from "./columns";
import { pullSpec, type PullSpec } from "./pulls";
import { openPostgresSource } from "./sources/postgres";
import { openObject } from "./sources/objects";

/** Tries of one run before it fails for good and the organization is told (a job that threw is tried again later). */
export const PULL_MAX_ATTEMPTS = 3;

/** How long a pull may take: one statement on the source database, connecting to it, and the whole run. */
export interface PullTimeLimits {
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  runTimeoutMs: number;
}

export const DEFAULT_PULL_TIME_LIMITS: PullTimeLimits = { statementTimeoutMs: 5 * 60_000, connectTimeoutMs: 10_000, runTimeoutMs: 30 * 60_000 };

export type RunOutcome = { state: "succeeded" } | { state: "retry"; error: string } | { state: "failed"; error: string } | { state: "skipped" };

/** Progress written while a load streams: often enough to watch, not once per chunk. */
const PROGRESS_EVERY_MS = 2_000;

/**
 * One try of a pull's run: claims it (a finished run is skipped, so a redelivered job does nothing), reads the source
 * and loads the table in one transaction that also records the run's outcome and moves the pull's cursor: the rows,
 * the cursor and "succeeded" are kept together or not at all, so a retried run never loads an increment twice.
 * A failure is recorded on the run; it is retried until PULL_MAX_ATTEMPTS, then the run has failed.
 */
export async function runPullOnce(orgId: string, runId: string, limits: PullTimeLimits = DEFAULT_PULL_TIME_LIMITS): Promise<RunOutcome> {
  const scope = { orgId };
  const claimed = await withTenant(scope, async (tx) => {
    const run = await tx.dataPullRun.findUnique({ where: { id: runId } });
    if (!run || run.status === "succeeded" || run.status === "failed") return null;
    const pull = await tx.dataPull.findUnique({ where: { id: run.pullId } });
    if (!pull) return null;
    const started = await tx.dataPullRun.update({ where: { id: runId }, data: { status: "running", attempts: { increment: 1 }, startedAt: new Date(), error: null, cursorFrom: pull.cursorValue } });
    return { run: started, pull };
  });
  if (!claimed) return { state: "skipped" };
  const { run, pull } = claimed;
  try {
    await execute(scope, pull, run, limits);
    return { state: "succeeded" };
  } catch (error) {
    const message = failureText(error);
    const final = run.attempts >= PULL_MAX_ATTEMPTS;
    await withTenant(scope, (tx) =>
      tx.dataPullRun.update({ where: { id: runId }, data: { status: final ? "failed" : "queued", error: message, finishedAt: final ? new Date() : null } }),
    );
    log.warn("data pull failed", { orgId, pullId: pull.id, runId, attempt: run.attempts, final, error: message });
    return final ? { state: "failed", error: message } : { state: "retry", error: message };
  }
}

/** What the admin reads: a domain error's own words; anything else is named, not hidden. */
function failureText(error: unknown): string {
  const text = error instanceof DomainError ? error.message : `${(error as Error)?.name ?? "Error"}: ${(error as Error)?.message ?? String(error)}`;
  return text.slice(0, 2_000);
}

async function execute(scope: TenantScope, pull: DataPull, run: DataPullRun, limits: PullTimeLimits): Promise<void> {
  const spec = pullSpec(pull);
  const abort = AbortSignal.timeout(limits.runTimeoutMs);
  const entry = await withTenant(scope, (tx) => findTableEntry(tx, pull.tableName));
  const mode: LoadMode = entry ? (pull.mode as LoadMode) : "create";
  const progress = progressWriter(scope, run.id);
  const finish = (bytesRead: number, cursorTo: () => string | null) => async (tx: BulkTx, report: { rowsLoaded: number }) => {
    const cursor = cursorTo();
    await tx.exec("UPDATE data_pull_runs SET status = 'succeeded', rows_loaded = $2, bytes_read = $3, cursor_to = $4, error = NULL, finished_at = now() WHERE id = $1", [run.id, report.rowsLoaded, bytesRead, cursor]);
    await tx.exec("UPDATE data_pulls SET cursor_value = $2 WHERE id = $1", [pull.id, cursor]);
  };
  const load = (source: RowSource, columns: Awaited<ReturnType<typeof columnsFor>>, withinLoad: ReturnType<typeof finish>) =>
    loadTable(
      scope,
      { table: pull.tableName, mode, columns, keyColumns: pull.keyColumns.length > 0 ? pull.keyColumns : undefined, onBadRow: "fail", addNewColumns: true, actor: { system: `pull:${pull.id}` }, withinLoad },
      source,
      progress,
    );
  if (spec.kind === "postgres") {
    const source = await openPostgresSource(spec, spec.cursorColumn ? pull.cursorValue : null, limits);
    abort.addEventListener("abort", () => void source.close(), { once: true });
    try {
      const columns = await columnsFor(entry, source.header, { addNewColumns: true, types: source.types });
      await load(source, columns, finish(0, () => source.cursorValue()));
    } finally {
      await source.close();
    }
    return;
  }
  await pullFile(spec, abort, async (open, bytesRead) => {
    const source = await open();
    const columns = await columnsFor(entry, source.header, { addNewColumns: true, inferFrom: open });
    await load(source, columns, finish(bytesRead, () => null));
  });
}

/** The object spooled to a temporary file under the file limits (Parquet needs its footer; inference reads it twice), then handed over. */
async function pullFile(spec: Exclude<PullSpec, { kind: "postgres" }>, signal: AbortSignal, load: (open: () => Promise<RowSource>, bytesRead: number) => Promise<void>): Promise<void> {
  const limits = sourceLimits();
  const stream = await openObject(spec, signal);
  const spooled = await spool(stream, limits.maxBytes, `object.${spec.format}`);
  try {
    const bytesRead = (await fs.promises.stat(spooled.file)).size;
    await load(() => openRowSource(fs.createReadStream(spooled.file), { format: spec.format, delimiter: spec.delimiter, limits }), bytesRead);
  } finally {
    await spooled.release();
  }
}

/**
 * Writes a running load's rows and bytes on the run every PROGRESS_EVERY_MS, outside the load's transaction (which
 * holds its own connection). Only while the run is still "running": a late write never undoes its outcome.
 */
function progressWriter(scope: TenantScope, runId: string): (rows: number, bytes: number) => void {
  let last = Date.now();
  return (rows, bytes) => {
    if (Date.now() - last < PROGRESS_EVERY_MS) return;
    last = Date.now();
    withTenant(scope, (tx) => tx.dataPullRun.updateMany({ where: { id: runId, status: "running" }, data: { rowsLoaded: rows, bytesRead: bytes } }), { connectionWaitMs: 1_000 }).catch(() => undefined);
  };
}
