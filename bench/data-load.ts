// npm run bench -- data-load [rows, default 1000000] [--engine pglite|postgres|both] (issue 42 §8).
// Writes a CSV of `rows` rows (8 columns: every inferred type) and the same rows as Parquet, then:
// - reading alone: a native baseline (the bytes split into lines and fields, no quotes, no types) beside
//   openRowSource + TypeInference over every row (what an upload's review costs), for CSV and Parquet;
// - on each engine: loadTable (create, the inferred types, the organization's RLS table) from the CSV and
//   from the Parquet file, in rows per second, beside the engine's own CSV COPY of the same file into a
//   plain table of the same types (PGlite's COPY FROM STDIN through its socket, and psql \copy on
//   PostgreSQL), in the same run; and the growth of this process's resident memory (the app's side of the
//   load: reading, parsing, COPY encoding) sampled every 50 ms while loadTable streams, with the embedded
//   engine's own process beside it;
// - a dashboard over the loaded table (the CSV's, all rows): its widgets in one batch as the dashboard endpoint runs
//   them, from the table, then from a rollup it declares (the build timed), the two answers compared.
import { execFileSync } from "node:child_process";
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { finished, pipeline } from "node:stream/promises";
import { from as copyFrom } from "pg-copy-streams";
import { fileWriter, parquetWriteRows } from "hyparquet-writer";
import { columnIdentifiers, openRowSource, TypeInference, type ColumnType, type SourceFormat } from "@/lib/data/formats";
import { sourceLimits } from "@/lib/data/limits";
import { loadTable } from "@/lib/data/load";
import { SQL_TYPES } from "@/lib/data/storage";
import { deleteTable } from "@/lib/data/tables";
import { withRawTransaction } from "@/lib/db/bulk";
import type { Database } from "@/lib/db/client";
import type { TenantScope } from "@/lib/db/tenant";
import { findOrganization } from "@/lib/auth/directory";
import { SQL_ALLOW_LIST } from "@/lib/dashboards/manifest";
import { withOwnTables } from "@/lib/db/own-tables";
import { closeQueue } from "@/lib/job-queue";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { dashboardRollups } from "@/lib/query/rollup-definition";
import type { BuiltRollup } from "@/lib/query/rollup-routing";
import { planWidget, sharedScans } from "@/lib/query/run";
import { refreshOrganizationRollups } from "@/lib/rollups/build";
import { freshRollups, rollupId } from "@/lib/rollups/registry";
import { publishRollups, runWidgets, widgetYaml } from "@/test/support/sample-variants";
import { withSeededDb } from "./lib/seeded-db";
import { benchEngines, benchPostgresUrl, positional } from "./lib/scratch-db";

const ACME: TenantScope = { orgId: "org_acme" };
const CHANNELS = ["search", "social", "email", "display", "video"];

/** Row i of the bench file: deterministic, every type represented. */
function row(i: number): (string | number | boolean | bigint | Date)[] {
  const day = new Date(Date.UTC(2024, 0, 1) + (i % 730) * 86_400_000);
  return [
    i + 1,
    day.toISOString().slice(0, 10),
    `LOC-${String((i * 7) % 40).padStart(2, "0")}`,
    CHANNELS[i % CHANNELS.length],
    ((i * 37) % 100_000) / 100,
    (i * 13) % 5000,
    i % 3 === 0,
    new Date(day.getTime() + ((i * 7919) % 86_400) * 1000),
  ];
}
const HEADER = ["id", "day", "location_code", "channel", "spend", "clicks", "paid", "at"];

async function writeCsv(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  out.write(HEADER.join(",") + "\n");
  let buffer = "";
  for (let i = 0; i < rows; i++) {
    const values = row(i);
    buffer += `${values[0]},${values[1]},${values[2]},${values[3]},${(values[4] as number).toFixed(2)},${values[5]},${values[6]},${(values[7] as Date).toISOString()}\n`;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
      buffer = "";
    }
  }
  out.end(buffer);
  await finished(out);
}

async function writeParquet(file: string, rows: number): Promise<void> {
  function* objects() {
    for (let i = 0; i < rows; i++) {
      const [id, day, location, channel, spend, clicks, paid, at] = row(i);
      yield { id: BigInt(id as number), day, location_code: location, channel, spend, clicks, paid, at };
    }
  }
  await parquetWriteRows({
    writer: fileWriter(file),
    rows: objects(),
    columns: [
      { name: "id", type: "INT64" },
      { name: "day", type: "STRING" },
      { name: "location_code", type: "STRING" },
      { name: "channel", type: "STRING" },
      { name: "spend", type: "DOUBLE" },
      { name: "clicks", type: "INT32" },
      { name: "paid", type: "BOOLEAN" },
      { name: "at", type: "TIMESTAMP" },
    ],
    rowGroupSize: 100_000,
  });
}

/** Lines and fields of a plain CSV by splitting bytes: what any reader must at least do. */
async function nativeSplit(file: string): Promise<number> {
  let rows = 0;
  let fields = 0;
  let tail = "";
  for await (const chunk of createReadStream(file, { encoding: "utf8", highWaterMark: 1 << 20 })) {
    const lines = (tail + chunk).split("\n");
    tail = lines.pop()!;
    for (const line of lines) {
      fields += line.split(",").length;
      rows++;
    }
  }
  return fields > 0 ? rows - 1 : 0;
}

async function inferTypes(file: string, format: SourceFormat): Promise<{ header: string[]; types: ColumnType[]; rows: number }> {
  const source = await openRowSource(createReadStream(file), { format, limits: sourceLimits() });
  const inference = new TypeInference(source.header.length);
  let rows = 0;
  for await (const values of source.rows) {
    inference.observe(values);
    rows++;
  }
  return { header: source.header, types: inference.result(), rows };
}

const seconds = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  const result = await work();
  return [result, (performance.now() - started) / 1000];
};

const rate = (rows: number, s: number) => `${Math.round(rows / s).toLocaleString("en-US").padStart(9)} rows/s (${s.toFixed(1)} s)`;
const mb = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(0)} MB`;

/** Resident memory of this process's children (the embedded engine), in bytes. */
function childrenRss(): number {
  try {
    return execFileSync("ps", ["-o", "rss=", "--ppid", String(process.pid)], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .reduce((sum, kb) => sum + Number(kb) * 1024, 0);
  } catch {
    return 0;
  }
}

/** Runs `work`, sampling resident memory every 50 ms: the peak above the start, here and in the children. */
async function withMemory<T>(work: () => Promise<T>): Promise<{ result: T; own: number; children: number }> {
  const ownStart = process.memoryUsage().rss;
  const childStart = childrenRss();
  let own = 0;
  let children = 0;
  let sampling = 0;
  const timer = setInterval(() => {
    own = Math.max(own, process.memoryUsage().rss - ownStart);
    if (sampling++ % 10 === 0) children = Math.max(children, childrenRss() - childStart);
  }, 50);
  try {
    const result = await work();
    return { result, own, children };
  } finally {
    clearInterval(timer);
  }
}

/**
 * The engine's own CSV COPY of `file` into a plain table of `types`: PGlite's COPY FROM '/dev/blob'
 * (the whole file handed to the engine process: how PGlite takes COPY input, lib/db/embedded-engine.ts),
 * PostgreSQL's COPY FROM STDIN streamed by the app's connection, and psql's \copy.
 */
async function nativeCopy(db: Database, file: string, header: string[], types: ColumnType[]): Promise<{ seconds: number; via: string }[]> {
  const columns = header.map((name, i) => `${name} ${SQL_TYPES[types[i]]}`).join(", ");
  const sql = "COPY bench_native_copy FROM STDIN WITH (FORMAT csv, HEADER true)";
  const out: { seconds: number; via: string }[] = [];
  await db.system.exec(`DROP TABLE IF EXISTS bench_native_copy; CREATE TABLE bench_native_copy (${columns})`);
  const [, s] = await seconds(() =>
    withRawTransaction(db, async () => {
      if (db.engine) await db.engine.copyInSession(sql, readFileSync(file));
      else {
        const client = await db.pool.connect();
        try {
          await pipeline(createReadStream(file), client.query(copyFrom(sql)));
        } finally {
          client.release();
        }
      }
    }),
  );
  out.push({ seconds: s, via: db.engine ? "PGlite COPY FROM '/dev/blob' (csv)" : "COPY FROM STDIN (csv), a pg connection" });
  if (db.kind === "postgres") {
    await db.system.exec("TRUNCATE bench_native_copy");
    const url = new URL(benchPostgresUrl()!);
    url.pathname = "/quarry_bench";
    const [, psql] = await seconds(async () => execFileSync("psql", [url.toString(), "-q", "-c", `\\copy bench_native_copy FROM '${file}' WITH (FORMAT csv, HEADER true)`]));
    out.push({ seconds: psql, via: "psql \\copy" });
  }
  await db.system.exec("DROP TABLE bench_native_copy");
  return out;
}

/** A dashboard over the loaded table: four aggregate widgets, and a day rollup that covers them. */
function loadedTableDashboard(table: string) {
  const yaml = `version: "1.0"
kind: dashboard
metadata: { id: bench-loaded-table, name: Loaded table }
spec:
  datasets:
    - id: spend
      from: ${table}
      dimensions:
        - { id: day, column: ${table}.day }
        - { id: month, column: "to_char(date_trunc('month', ${table}.day), 'YYYY-MM')" }
        - { id: channel, column: ${table}.channel }
        - { id: paid, column: ${table}.paid }
      metrics:
        - { id: spend, type: sql, expression: sum(${table}.spend) }
        - { id: clicks, type: sql, expression: sum(${table}.clicks) }
        - { id: rows, type: sql, expression: count(*) }
        - { id: per_click, type: formula, expression: "round(spend / clicks, 4)" }
      rollups:
        - { name: spend_by_day, time_dimension: day, granularity: day, dimensions: [month, channel, paid], measures: [spend, clicks, rows] }
${[
  widgetYaml("by_channel", "  data: { kind: dataset, dataset: spend, columns: [channel, spend, clicks, per_click] }"),
  widgetYaml("by_month", "  data: { kind: dataset, dataset: spend, columns: [month, spend, rows] }"),
  widgetYaml("by_day", "  data: { kind: dataset, dataset: spend, columns: [day, spend] }"),
  widgetYaml("paid_split", "  data: { kind: dataset, dataset: spend, columns: [paid, clicks, rows] }"),
].join("")}`;
  const parsed = parseDashboardYaml(yaml, { sqlPolicy: SQL_ALLOW_LIST });
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => `${e.line}:${e.column} ${e.message}`).join("\n"));
  return parsed.dashboard;
}

/** The dashboard's widgets over the loaded table from the table and from its rollup: median of `runs` batches each, and the build. */
async function dashboardOverLoadedTable(table: string, runs = 5): Promise<void> {
  const dashboard = await withOwnTables(ACME.orgId, async () => loadedTableDashboard(table));
  const widgets = dashboard.widgets.map((w) => w.metadata.id);
  const now = new Date();
  // The organization's zone: a rollup answers only in the zone its days were cut in.
  const timeZone = (await findOrganization(ACME.orgId))?.timeZone ?? "UTC";
  const batch = (rollups: readonly BuiltRollup[] | undefined) => {
    const base = { scope: ACME, dashboard, filterValues: {}, now, timeZone, rollups };
    return withOwnTables(ACME.orgId, () => runWidgets({ ...base, shared: sharedScans(widgets.map((widgetId) => planWidget({ ...base, widgetId })), rollups) }, widgets));
  };
  // A batch the engine refuses (on PGlite past 1 M rows the table's statements pass the 10 s limit, and its restarts
  // can leave no connection free) is reported, not fatal: the rollup's side is still measured.
  const timed = async (rollups: readonly BuiltRollup[] | undefined) => {
    const times: number[] = [];
    let answer: Awaited<ReturnType<typeof batch>> = {};
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      try {
        answer = await batch(rollups);
      } catch (error) {
        return { answer, median: Number.NaN, failure: `${(error as Error).message} after ${((performance.now() - started) / 1000).toFixed(1)} s` };
      }
      times.push(performance.now() - started);
    }
    const failed = Object.values(answer).flatMap((o) => ("error" in o ? [o.error] : []));
    return { answer, median: times.sort((a, b) => a - b)[Math.floor(runs / 2)], failure: failed.length > 0 ? `${failed.length} widgets failed: ${failed[0]}` : undefined };
  };
  const tables = await timed(undefined);
  const definitions = dashboardRollups(dashboard.datasets.values());
  await publishRollups(ACME.orgId, definitions);
  const ids = new Set(definitions.map(rollupId));
  const [outcomes, buildSeconds] = await seconds(async () => (await refreshOrganizationRollups(ACME.orgId)).filter((o) => ids.has(o.id)));
  const fresh = (await freshRollups(ACME, definitions, timeZone)).fresh;
  const routed = await timed(fresh);
  const strip = (answer: typeof routed.answer) => JSON.stringify(Object.fromEntries(Object.entries(answer).map(([id, o]) => [id, "error" in o ? o : { ...o, source: undefined }])));
  const answeredBy = Object.values(routed.answer).map((o) => ("error" in o ? `error: ${o.error}` : o.source?.kind === "rollup" ? o.source.name : (o.source?.kind ?? "?")));
  console.log(`  dashboard over the loaded table (${widgets.length} widgets, one batch, median of ${runs})`);
  console.log(`    from the table                         ${tables.median.toFixed(0).padStart(7)} ms${tables.failure ? `  FAILED: ${tables.failure}` : ""}`);
  console.log(`    rollup built                           ${(buildSeconds * 1000).toFixed(0).padStart(7)} ms  ${outcomes.map((o) => `${o.name} ${o.state} ${o.rows.toLocaleString("en-US")} rows${o.error ? ` ${o.error}` : ""}`).join(", ")}`);
  console.log(`    from the rollup                        ${routed.median.toFixed(0).padStart(7)} ms${routed.failure ? `  FAILED: ${routed.failure}` : ""}  x${(tables.median / routed.median).toFixed(0)} faster; answered by ${[...new Set(answeredBy)].join(", ")}; same rows as the table: ${strip(routed.answer) === strip(tables.answer) ? "yes" : "NO"}`);
}

export default async function bench(args: string[]): Promise<void> {
  const rows = Number(positional(args, ["--engine"])[0] ?? 1_000_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), "quarry-bench-data-load-"));
  const csv = path.join(dir, "rows.csv");
  const parquet = path.join(dir, "rows.parquet");
  const warmUp = path.join(dir, "warm-up.csv");
  try {
    await writeCsv(csv, rows);
    await writeParquet(parquet, rows);
    console.log(`data-load: ${rows.toLocaleString("en-US")} rows, CSV ${mb(statSync(csv).size)}, Parquet ${mb(statSync(parquet).size)} (row groups of 100,000); ${os.availableParallelism()} cores, load average ${os.loadavg()[0].toFixed(1)}`);

    console.log("\nreading alone (no database)");
    const [nativeRows, nativeSeconds] = await seconds(() => nativeSplit(csv));
    console.log(`  native split of lines and fields        ${rate(nativeRows, nativeSeconds)}`);
    const csvRead = await withMemory(() => seconds(() => inferTypes(csv, "csv")));
    const [[csvInferred, csvSeconds]] = [csvRead.result];
    console.log(`  CSV: openRowSource + TypeInference      ${rate(csvInferred.rows, csvSeconds)}  ${(csvSeconds / nativeSeconds).toFixed(1)}x native  memory +${mb(csvRead.own)}  types ${csvInferred.types.join(",")}`);
    const parquetRead = await withMemory(() => seconds(() => inferTypes(parquet, "parquet")));
    const [[parquetInferred, parquetSeconds]] = [parquetRead.result];
    console.log(`  Parquet: openRowSource + TypeInference  ${rate(parquetInferred.rows, parquetSeconds)}  memory +${mb(parquetRead.own)}  types ${parquetInferred.types.join(",")}`);

    for (const engine of benchEngines(args)) {
      await withSeededDb(engine, async (db) => {
        console.log(`\n${engine === "pglite" ? "PGlite" : "PostgreSQL"}: loading ${rows.toLocaleString("en-US")} rows`);
        for (const { seconds: s, via } of await nativeCopy(db, csv, csvInferred.header, csvInferred.types)) {
          console.log(`  native: ${via.padEnd(46)} ${rate(rows, s)}`);
        }
        const sources: [SourceFormat, string, typeof csvInferred][] = [
          ["csv", csv, csvInferred],
          ["parquet", parquet, parquetInferred],
        ];
        // Once on a small file first, unreported: code paths warmed, so the memory figures are the load's own.
        await writeCsv(warmUp, 2000);
        await loadTable(ACME, { table: "bench_load_warm_up", mode: "create", onBadRow: "fail", columns: columnIdentifiers(HEADER).map((name, from) => ({ name, type: csvInferred.types[from], from })) }, await openRowSource(createReadStream(warmUp), { format: "csv", limits: sourceLimits() }));
        await deleteTable(ACME, "bench_load_warm_up", { force: true });
        for (const [format, file, inferred] of sources) {
          const table = `bench_load_${format}`;
          await deleteTable(ACME, table, { force: true }).catch(() => undefined);
          const names = columnIdentifiers(inferred.header);
          const started = performance.now();
          let staged = started;
          const { result: outcome, own, children } = await withMemory(async () => {
            try {
              const source = await openRowSource(createReadStream(file), { format, limits: sourceLimits() });
              const request = { table, mode: "create" as const, onBadRow: "fail" as const, columns: names.map((name, from) => ({ name, type: inferred.types[from], from })) };
              // The last progress call is the end of staging (COPY into the temporary table); the rest is the move under RLS.
              return await loadTable(ACME, request, source, () => (staged = performance.now()));
            } catch (error) {
              return error as Error;
            }
          });
          const total = (performance.now() - started) / 1000;
          const phases = `staged ${((staged - started) / 1000).toFixed(1)} s, moved ${((performance.now() - staged) / 1000).toFixed(1)} s`;
          const memory = `memory +${mb(own)} in this process${engine === "pglite" ? `, +${mb(children)} in the engine process` : ""}`;
          if (outcome instanceof Error) console.log(`  loadTable from ${format.padEnd(7)} (create, RLS table)              FAILED after ${total.toFixed(1)} s (${phases}): ${outcome.message}  ${memory}`);
          else console.log(`  loadTable from ${format.padEnd(7)} (create, RLS table)              ${rate(outcome.rowCount, total)}  ${phases}  ${memory}`);
          if (format === "csv" && !(outcome instanceof Error)) await dashboardOverLoadedTable(table);
          await deleteTable(ACME, table, { force: true }).catch(() => undefined);
        }
      });
    }
  } finally {
    // A load asks the worker for a rollup refresh, which opens the job queue: closed, or the bench never exits.
    await closeQueue();
    rmSync(dir, { recursive: true, force: true });
  }
}
