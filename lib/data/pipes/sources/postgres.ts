import "server-only";
import pg from "pg";
import { assertPublicHost } from "@/lib/notifications/transports/url-guard";
import type { ColumnType } from "@/lib/data/formats/infer";
import { quoteIdent } from "@/lib/data/storage";
import type { RowSource } from "@/lib/data/formats/types";
import { PullFailed } from "../errors";

/** What a PostgreSQL pull reads: the organization's own database, by a URL they gave, with one query of theirs. */
export interface PostgresSourceSpec {
  url: string;
  query: string;
  /** Incremental: only rows whose value in this column is greater than `after`, in its order. */
  cursorColumn?: string;
}

export interface PostgresRowSource extends RowSource {
  /** Each column's type, from the source's own column types. */
  types: ColumnType[];
  /** The cursor column's greatest value read so far (as PostgreSQL writes it), or the `after` given when none. */
  cursorValue(): string | null;
  /** Ends the transaction and the connection (also when the rows were not read to their end). */
  close(): Promise<void>;
}

/** How many rows one FETCH brings: a batch in memory at a time, never the whole result. */
const FETCH_ROWS = 2000;

/** The columns' types by the source's type OIDs (pg_type): what COPY into our table can take exactly; text for anything else. */
const TYPE_OF_OID: Record<number, ColumnType> = {
  16: "boolean",
  20: "integer",
  21: "integer",
  23: "integer",
  700: "numeric",
  701: "numeric",
  1700: "numeric",
  1082: "date",
  1114: "timestamptz",
  1184: "timestamptz",
};

/** The parts of a connection URL, refused when it is not one. */
export function parsePostgresUrl(raw: string): { host: string; port: number; user: string; password: string; database: string; ssl: "disable" | "require" | "verify-full" } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PullFailed("The connection URL is not a URL (postgres://user:password@host:port/database)");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") throw new PullFailed("The connection URL must start with postgres:// or postgresql://");
  if (!url.hostname) throw new PullFailed("The connection URL names no host");
  const database = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (!database) throw new PullFailed("The connection URL names no database");
  const mode = url.searchParams.get("sslmode") ?? "prefer";
  const ssl = mode === "disable" || mode === "allow" || mode === "prefer" ? "disable" : mode === "verify-full" || mode === "verify-ca" ? "verify-full" : "require";
  return { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || 5432), user: decodeURIComponent(url.username), password: decodeURIComponent(url.password), database, ssl };
}

/**
 * The query's rows from the organization's database: the host checked against the outbound rules of webhooks
 * (lib/notifications/transports/url-guard.ts) and the connection made to exactly the address checked; one read-only
 * transaction (`BEGIN READ ONLY`, a statement time limit), the query sent alone over the extended protocol (one
 * statement: no `COMMIT; ...` can follow it), read through a cursor a batch at a time. Values are PostgreSQL's own text.
 */
export async function openPostgresSource(spec: PostgresSourceSpec, after: string | null, limits: { statementTimeoutMs: number; connectTimeoutMs: number }): Promise<PostgresRowSource> {
  const parts = parsePostgresUrl(spec.url);
  let target;
  try {
    target = await assertPublicHost(parts.host);
  } catch (error) {
    throw new PullFailed((error as Error).message);
  }
  const client = new pg.Client({
    host: target.address,
    port: parts.port,
    user: parts.user,
    password: parts.password,
    database: parts.database,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    // TLS still names the host the URL names (SNI, certificate), while the socket goes to the checked address.
    ssl: parts.ssl === "disable" ? false : { servername: parts.host, rejectUnauthorized: parts.ssl === "verify-full" },
    application_name: "quarry-pull",
    // Every value as the server wrote it: the canonical text our loader parses.
    types: { getTypeParser: () => (value: string) => value },
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
  } catch (error) {
    throw new PullFailed(`Could not connect to ${parts.host}:${parts.port}: ${(error as Error).message}`);
  }
  let open = true;
  const close = async () => {
    if (!open) return;
    open = false;
    await client.query("ROLLBACK").catch(() => undefined);
    await client.end().catch(() => undefined);
  };
  try {
    await client.query("BEGIN READ ONLY");
    await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.ceil(limits.statementTimeoutMs))}`);
    const cursor = spec.cursorColumn ? `quarry_source.${quoteIdent(spec.cursorColumn)}` : null;
    const text = cursor
      ? `DECLARE quarry_pull NO SCROLL CURSOR FOR SELECT * FROM (${spec.query}) AS quarry_source${after === null ? "" : ` WHERE ${cursor} > $1`} ORDER BY ${cursor}`
      : `DECLARE quarry_pull NO SCROLL CURSOR FOR SELECT * FROM (${spec.query}) AS quarry_source`;
    await client.query({ text, values: cursor && after !== null ? [after] : [], queryMode: "extended" } as pg.QueryConfig);
    const first = await client.query({ text: `FETCH ${FETCH_ROWS} FROM quarry_pull`, rowMode: "array" });
    const header = first.fields.map((f) => f.name);
    const types = first.fields.map((f) => TYPE_OF_OID[f.dataTypeID] ?? "text");
    // The server refused a cursor column the query lacks (ORDER BY names it), so it is in the header.
    const cursorIndex = spec.cursorColumn ? header.indexOf(spec.cursorColumn) : -1;
    let last = after;
    const render = (row: unknown[]) => row.map((value) => (value === null || value === undefined ? null : String(value)));
    async function* rows(): AsyncGenerator<(string | null)[]> {
      try {
        let batch = first.rows as unknown[][];
        for (;;) {
          for (const row of batch) {
            const values = render(row);
            if (cursorIndex >= 0 && values[cursorIndex] !== null) last = values[cursorIndex];
            yield values;
          }
          if (batch.length < FETCH_ROWS) break;
          batch = (await client.query({ text: `FETCH ${FETCH_ROWS} FROM quarry_pull`, rowMode: "array" })).rows as unknown[][];
        }
      } catch (error) {
        throw asPullFailure(error, parts.host);
      } finally {
        await close();
      }
    }
    return { header, types, rows: rows(), cursorValue: () => last, close };
  } catch (error) {
    await close();
    throw asPullFailure(error, parts.host);
  }
}

function asPullFailure(error: unknown, host: string): Error {
  if (error instanceof PullFailed) return error;
  const code = (error as { code?: string }).code;
  if (code === "57014") return new PullFailed(`The source query on ${host} ran longer than its time limit`);
  if (code === "25006") return new PullFailed(`The source query on ${host} tried to write: pulls run read-only`);
  return new PullFailed(`The source database ${host} answered: ${(error as Error).message}`);
}
