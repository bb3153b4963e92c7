import "server-only";
import type { z } from "zod";
import type { Principal } from "@/lib/access/roles";
import { findOrganization } from "@/lib/auth/directory";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { DataPull, DataPullRun } from "@/lib/db/generated/client";
import { Invalid, forbidden, notFound } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { cronError, nextRuns } from "@/lib/notifications/settings/cron";
import { openSecrets, sealSecrets } from "@/lib/notifications/settings/channel-secrets";
import { assertPublicHost, assertSafeUrl } from "@/lib/notifications/transports/url-guard";
import type { PullCreate, PullRecord, PullRunRecord, PullSourceInput, PullSourceView, PullUpdate } from "@/lib/data/pipes-contract";
import { parsePostgresUrl } from "./sources/postgres";
import { PullFailed } from "./errors";
import type { ObjectSourceSpec } from "./sources/objects";

/*
 * Pulls an organization names (docs/data.md "Pipelines"): what is shown of a source (`source`) and what reaches it
 * (`secrets_enc`, sealed with the application secret and bound to the organization and pull, so a sealed value
 * copied to another row does not open). Secrets never leave this module except to open the source for a run.
 */

/** An organization's pulls are bounded (each may run every minute). */
const MAX_PULLS = 100;

const binding = (orgId: string, pullId: string) => `${orgId}:data-pull:${pullId}`;

/** The source split into what may be shown and what is sealed. */
function splitSource(source: PullSourceInput): { view: PullSourceView; secrets: Record<string, string> } {
  const defined = (record: Record<string, string | undefined>) => Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as Record<string, string>;
  switch (source.kind) {
    case "postgres": {
      const parts = parsePostgresUrl(source.url);
      return { view: { kind: "postgres", host: parts.host, database: parts.database, query: source.query, cursor_column: source.cursor_column }, secrets: { url: source.url } };
    }
    case "s3":
      return {
        view: { kind: "s3", bucket: source.bucket, key: source.key, region: source.region, host: source.endpoint_url ? new URL(source.endpoint_url).host : undefined, format: source.format, delimiter: source.delimiter },
        secrets: defined({ endpoint_url: source.endpoint_url, access_key_id: source.access_key_id, secret_access_key: source.secret_access_key }),
      };
    case "gcs":
      return { view: { kind: "gcs", bucket: source.bucket, key: source.key, format: source.format, delimiter: source.delimiter }, secrets: { credentials_json: source.credentials_json } };
    case "https":
      return { view: { kind: "https", host: new URL(source.url).host, format: source.format, delimiter: source.delimiter }, secrets: defined({ url: source.url, authorization: source.authorization }) };
  }
}

/** What a run needs to reach the source: the view with the opened secrets. */
export type PullSpec =
  | { kind: "postgres"; url: string; query: string; cursorColumn?: string }
  | (ObjectSourceSpec & { format: "csv" | "parquet"; delimiter?: string });

export function pullSpec(pull: DataPull): PullSpec {
  const view = pull.source as PullSourceView;
  const secrets = openSecrets(pull.secretsEnc, binding(pull.orgId, pull.id));
  const file = { format: view.format ?? "csv", delimiter: view.delimiter };
  switch (pull.kind) {
    case "postgres":
      return { kind: "postgres", url: secrets.url, query: view.query ?? "", cursorColumn: view.cursor_column };
    case "s3":
      return { kind: "s3", bucket: view.bucket!, key: view.key!, region: view.region ?? "us-east-1", endpointUrl: secrets.endpoint_url, accessKeyId: secrets.access_key_id, secretAccessKey: secrets.secret_access_key, ...file };
    case "gcs":
      return { kind: "gcs", bucket: view.bucket!, key: view.key!, credentialsJson: secrets.credentials_json, ...file };
    default:
      return { kind: "https", url: secrets.url, authorization: secrets.authorization, ...file };
  }
}

/**
 * The outbound rules of webhooks, when a source is saved (and again before every run, as the address a name
 * resolves to may change): a 422 naming the field.
 */
async function checkReachable(source: PullSourceInput): Promise<void> {
  const field = source.kind === "s3" ? "endpoint_url" : "url";
  try {
    if (source.kind === "postgres") await assertPublicHost(parsePostgresUrl(source.url).host);
    else if (source.kind === "https") await assertSafeUrl(source.url);
    else if (source.kind === "s3" && source.endpoint_url) await assertSafeUrl(source.endpoint_url);
  } catch (error) {
    throw new Invalid([{ loc: ["body", "source", field], msg: (error as Error).message, type: "unsafe_target" }]);
  }
}

async function checkedSource(source: PullSourceInput): Promise<{ view: PullSourceView; secrets: Record<string, string> }> {
  try {
    const split = splitSource(source);
    await checkReachable(source);
    return split;
  } catch (error) {
    if (error instanceof PullFailed) throw new Invalid([{ loc: ["body", "source", "url"], msg: error.message, type: "value_error" }]);
    throw error;
  }
}

async function organizationZone(orgId: string): Promise<string> {
  return (await findOrganization(orgId))?.timeZone ?? "UTC";
}

function checkCron(cron: string | null | undefined, zone: string): void {
  const problem = cron ? cronError(cron, zone) : null;
  if (problem) throw new Invalid([{ loc: ["body", "cron"], msg: problem, type: "value_error" }]);
}

function checkCursor(source: PullSourceView, mode: string): void {
  if (source.cursor_column && mode === "replace") {
    throw new Invalid([{ loc: ["body", "source", "cursor_column"], msg: "An incremental pull adds rows: use mode append or upsert, not replace", type: "value_error" }]);
  }
}

export function toRunRecord(run: DataPullRun): z.input<typeof PullRunRecord> {
  return {
    id: run.id,
    pull_id: run.pullId,
    trigger: run.trigger as "cron" | "manual",
    status: run.status as "queued" | "running" | "succeeded" | "failed",
    attempts: run.attempts,
    rows_loaded: Number(run.rowsLoaded),
    bytes_read: Number(run.bytesRead),
    cursor_from: run.cursorFrom,
    cursor_to: run.cursorTo,
    error: run.error,
    scheduled_for: run.scheduledFor.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
  };
}

async function toRecord(tx: TenantTx, pull: DataPull, zone: string, now = new Date()): Promise<z.input<typeof PullRecord>> {
  const last = await tx.dataPullRun.findFirst({ where: { pullId: pull.id }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
  const next = pull.cron && !pull.paused ? nextRuns(pull.cron, now, 1, zone)[0] : null;
  return {
    id: pull.id,
    name: pull.name,
    table: pull.tableName,
    mode: pull.mode as "append" | "replace" | "upsert",
    key_columns: pull.keyColumns,
    source: pull.source as PullSourceView,
    cron: pull.cron,
    time_zone: zone,
    next_run_at: next?.toISOString() ?? null,
    paused: pull.paused,
    cursor_value: pull.cursorValue,
    last_run: last ? toRunRecord(last) : null,
    created_by: pull.createdBy,
    created_at: pull.createdAt.toISOString(),
    updated_at: pull.updatedAt.toISOString(),
  };
}

/**
 * Pulls are managed by admins of every location: a run loads with the whole organization's scope (a job has no
 * caller), so a location-limited admin could otherwise load rows of locations beyond their own.
 */
export function requireEveryLocation(principal: Principal): void {
  if (principal.locationIds !== null) throw forbidden("Pulls are managed by admins of every location");
}

async function findPull(tx: TenantTx, id: string): Promise<DataPull> {
  const pull = await tx.dataPull.findUnique({ where: { id } });
  if (!pull) throw notFound("Pull");
  return pull;
}

export async function listPulls(principal: Principal) {
  requireEveryLocation(principal);
  const zone = await organizationZone(principal.orgId);
  return withTenant({ orgId: principal.orgId }, async (tx) => {
    const pulls = await tx.dataPull.findMany({ orderBy: [{ name: "asc" }] });
    return { items: await Promise.all(pulls.map((p) => toRecord(tx, p, zone))) };
  });
}

export async function getPull(principal: Principal, id: string) {
  requireEveryLocation(principal);
  const zone = await organizationZone(principal.orgId);
  return withTenant({ orgId: principal.orgId }, async (tx) => toRecord(tx, await findPull(tx, id), zone));
}

export async function createPull(principal: Principal, input: z.output<typeof PullCreate>) {
  requireEveryLocation(principal);
  const zone = await organizationZone(principal.orgId);
  checkCron(input.cron, zone);
  const { view, secrets } = await checkedSource(input.source);
  checkCursor(view, input.mode);
  const id = newId("dpl");
  return withTenant({ orgId: principal.orgId }, async (tx) => {
    if ((await tx.dataPull.count()) >= MAX_PULLS) throw new Invalid(`An organization has at most ${MAX_PULLS} pulls; delete one first`);
    const now = new Date();
    const pull = await tx.dataPull.create({
      data: {
        id,
        orgId: principal.orgId,
        name: input.name,
        tableName: input.table,
        kind: view.kind,
        source: view,
        secretsEnc: sealSecrets(secrets, binding(principal.orgId, id)),
        mode: input.mode,
        keyColumns: input.key_columns,
        cursorColumn: view.cursor_column ?? null,
        cron: input.cron,
        paused: input.paused,
        // The schedule starts now: no occurrence before the pull existed is due.
        lastScheduledFor: now,
        createdBy: principal.userId,
        createdAt: now,
        updatedAt: now,
      },
    });
    return toRecord(tx, pull, zone, now);
  });
}

export async function updatePull(principal: Principal, id: string, input: z.output<typeof PullUpdate>) {
  requireEveryLocation(principal);
  const zone = await organizationZone(principal.orgId);
  checkCron(input.cron, zone);
  const source = input.source ? await checkedSource(input.source) : null;
  return withTenant({ orgId: principal.orgId }, async (tx) => {
    const pull = await findPull(tx, id);
    const mode = input.mode ?? pull.mode;
    const view = source?.view ?? (pull.source as PullSourceView);
    checkCursor(view, mode);
    const keyColumns = input.key_columns ?? pull.keyColumns;
    if (mode === "upsert" && keyColumns.length === 0) throw new Invalid([{ loc: ["body", "key_columns"], msg: "upsert needs key_columns", type: "value_error" }]);
    // A new cursor column (or none) starts the increments over.
    const cursorChanged = source !== null && (view.cursor_column ?? null) !== pull.cursorColumn;
    const now = new Date();
    const updated = await tx.dataPull.update({
      where: { id },
      data: {
        name: input.name,
        cron: input.cron,
        paused: input.paused,
        mode,
        keyColumns,
        ...(source
          ? { kind: view.kind, source: view, secretsEnc: sealSecrets(source.secrets, binding(principal.orgId, id)), cursorColumn: view.cursor_column ?? null, ...(cursorChanged ? { cursorValue: null } : {}) }
          : {}),
        // A changed schedule counts from now, not from occurrences that passed while it was different.
        ...(input.cron !== undefined || input.paused === false ? { lastScheduledFor: now } : {}),
        updatedAt: now,
      },
    });
    return toRecord(tx, updated, zone, now);
  });
}

export async function deletePull(principal: Principal, id: string): Promise<void> {
  requireEveryLocation(principal);
  await withTenant({ orgId: principal.orgId }, async (tx) => {
    await findPull(tx, id);
    await tx.dataPull.delete({ where: { id } });
  });
}

export async function listPullRuns(principal: Principal, id: string) {
  requireEveryLocation(principal);
  return withTenant({ orgId: principal.orgId }, async (tx) => {
    await findPull(tx, id);
    const runs = await tx.dataPullRun.findMany({ where: { pullId: id }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 100 });
    return { items: runs.map(toRunRecord) };
  });
}
