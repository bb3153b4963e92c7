import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as embed from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import * as embedQuery from "@/app/api/v1/embed/query/route";
import * as publicQuery from "@/app/api/v1/public/query/route";
import * as planRoute from "@/app/api/v1/custom-dashboards/%5Fplan/route";
import * as applyRoute from "@/app/api/v1/custom-dashboards/%5Fapply/route";
import { configSingleton } from "@/lib/config";
import { getDb } from "@/lib/db/client";
import { call, tokenFor } from "@/test/helpers";

/*
 * Issue 41: PostgreSQL runs `(expr).fname` and `alias.fname` as `fname(expr)` whenever fname is no
 * column (functional notation), a call the function allow-list never saw. Through it a general
 * manager's widget read another organization's running SQL, terminated its queries, poisoned pooled
 * connections, read the tenant signature, slept and held advisory locks. Each payload, in the words
 * it was found in, in every place a statement can live (a widget's query, a dataset's query and
 * `from`, a dimension, a metric, a rollup's dimension; saved, planned, applied; stored by hand and
 * read by the editor, the viewer, an embed and a public link), on both engines: refused with the
 * reason, never run, nothing of another organization in any answer.
 */

/** [name, the payload as an expression over `orders o`, what the refusal says]. */
const PAYLOADS: [string, string, RegExp][] = [
  ["text length", "('abc'::text).length", /field selection/],
  ["SQL text run by ts_stat", "($q$SELECT query::tsvector FROM pg_stat_activity$q$::text).ts_stat", /field selection/],
  ["set_config through ts_stat", "($q$SELECT set_config('search_path', 'pg_catalog', false)::tsvector$q$::text).ts_stat", /field selection/],
  ["column size of a table alias", "o.pg_column_size", /o\.pg_column_size is not a column of o/],
  ["tenant signature", "('app.tenant_signature'::text).current_setting", /field selection/],
  ["advisory lock", "(o.customer_id::bigint).pg_advisory_lock", /field selection/],
  ["sleep", "(30::float8).pg_sleep", /field selection/],
  ["terminate a backend", "(o.customer_id).pg_terminate_backend", /field selection/],
  ["cancel a backend", "o.pg_cancel_backend", /not a column of o/],
  ["a gigabyte from format", "format('%1$900000000s', 'x')", /function format\(\) is not allowed/],
  ["nested replace", "replace(replace(replace(o.channel, 'e', repeat('e', 1)), 'e', 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'), 'e', 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee')", /text literals|times longer/],
];

const HEADER = (slug: string) => `version: "1.0"
kind: dashboard
metadata: { id: ${slug}, name: ${slug} }
platform: { roles: [admin, general_manager, analyst], allow_embed: true, public: true }
`;
const TABLE_WIDGET = (data: string) => `---
version: "1.0"
kind: widget
metadata: { id: w, name: W }
spec:
  component: table
  layout: { x: 0, y: 0, w: 6, h: 4 }
  data: ${data}
`;

/** Each place a statement can live, with the payload put there. */
const CONTEXTS: Record<string, (slug: string, expression: string) => string> = {
  "widget query": (slug, e) => `${HEADER(slug)}spec:\n  tabs: [{ id: main, name: Main, widgets: [w] }]\n${TABLE_WIDGET(`{ kind: sql, query: ${JSON.stringify(`SELECT ${e} AS x FROM orders o`)} }`)}`,
  "dataset query": (slug, e) =>
    `${HEADER(slug)}spec:\n  datasets:\n    - id: d\n      query: ${JSON.stringify(`SELECT o.channel, ${e} AS x FROM orders o`)}\n      dimensions: [{ id: channel, column: d.channel }]\n      metrics: [{ id: n, type: sql, expression: "count(*)" }]\n  tabs: [{ id: main, name: Main, widgets: [w] }]\n${TABLE_WIDGET("{ kind: dataset, dataset: d, columns: [channel, n] }")}`,
  "dataset from": (slug, e) =>
    `${HEADER(slug)}spec:\n  datasets:\n    - id: d\n      from: ${JSON.stringify(`orders o, LATERAL (SELECT ${e} AS x) s`)}\n      dimensions: [{ id: channel, column: o.channel }]\n      metrics: [{ id: n, type: sql, expression: "count(*)" }]\n  tabs: [{ id: main, name: Main, widgets: [w] }]\n${TABLE_WIDGET("{ kind: dataset, dataset: d, columns: [channel, n] }")}`,
  dimension: (slug, e) =>
    `${HEADER(slug)}spec:\n  datasets:\n    - id: d\n      from: orders o\n      dimensions: [{ id: x, column: ${JSON.stringify(e)} }]\n      metrics: [{ id: n, type: sql, expression: "count(*)" }]\n  tabs: [{ id: main, name: Main, widgets: [w] }]\n${TABLE_WIDGET("{ kind: dataset, dataset: d, columns: [x, n] }")}`,
  metric: (slug, e) =>
    `${HEADER(slug)}spec:\n  datasets:\n    - id: d\n      from: orders o\n      dimensions: [{ id: channel, column: o.channel }]\n      metrics: [{ id: n, type: sql, expression: ${JSON.stringify(`max((${e})::text)`)} }]\n  tabs: [{ id: main, name: Main, widgets: [w] }]\n${TABLE_WIDGET("{ kind: dataset, dataset: d, columns: [channel, n] }")}`,
  "rollup dimension": (slug, e) =>
    `${HEADER(slug)}spec:\n  datasets:\n    - id: d\n      from: orders o\n      dimensions:\n        - { id: day, column: o.order_date }\n        - { id: loc, column: o.location_id }\n        - { id: x, column: ${JSON.stringify(e)} }\n      metrics: [{ id: revenue, type: sql, expression: "sum(o.amount)" }]\n      rollups:\n        - { name: daily, time_dimension: day, granularity: day, location_dimension: loc, dimensions: [x], measures: [revenue] }\n  tabs: [{ id: main, name: Main, widgets: [w] }]\n${TABLE_WIDGET("{ kind: dataset, dataset: d, columns: [x, revenue] }")}`,
};

const CASES = Object.keys(CONTEXTS).flatMap((context) => PAYLOADS.map(([name, expression, reason]) => [context, name, expression, reason] as const));

/**
 * What must never appear in an acme caller's answer: globex's ids, another session's SQL, any user's e-mail or password hash,
 * the tenant signature's value (a refusal may quote the caller's own expression, `'app.tenant_signature'::text`: a cast, not a value).
 */
function assertNothingForeign(text: string) {
  expect(text).not.toMatch(/globex/i);
  expect(text).not.toMatch(/password_hash|\$scrypt|\$argon2|@acme\.test|tenant_signature'?\s*(=|:(?!:))/);
  expect(text).not.toMatch(/pg_stat_activity.*\b(SELECT|INSERT)\b.*\bFROM\b/s);
}

let manager: string;
let admin: string;
let counter = 0;
const slugFor = () => `fn-notation-${++counter}`;

beforeAll(async () => {
  // Hundreds of saves and anonymous queries from one address: the limits are counted, just higher (rate-limit.test.ts holds them).
  process.env.QUARRY_RATE_LIMIT_MULTIPLIER = "50";
  configSingleton.set(undefined);
  [manager, admin] = await Promise.all([tokenFor("acme", "general_manager"), tokenFor("acme", "admin")]);
});

afterAll(() => {
  delete process.env.QUARRY_RATE_LIMIT_MULTIPLIER;
  configSingleton.set(undefined);
});

describe("functional notation and unbounded text, in every place a statement lives (issue 41)", () => {
  it.each(CASES)("%s: %s is refused when saved", async (context, _name, expression, reason) => {
    const slug = slugFor();
    const res = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: manager, body: { name: slug, slug, spec_yaml: CONTEXTS[context](slug, expression) } });
    expect(res.status, res.text).toBe(422);
    expect((res.json.detail as { msg: string }[]).map((d) => d.msg).join("\n")).toMatch(reason);
    assertNothingForeign(res.text);
  });

  it.each(Object.keys(CONTEXTS))("%s: every payload is an error in a plan and refused by apply", async (context) => {
    const files = PAYLOADS.map(([, expression], i) => ({ path: `${context.replace(/\s/g, "-")}-${i}.yaml`, content: CONTEXTS[context](`${context.replace(/\s/g, "-")}-${i}`, expression) }));
    const planned = await call(planRoute.POST, "POST", { token: admin, body: { files } });
    expect(planned.status, planned.text).toBe(200);
    expect(planned.json.valid).toBe(false);
    for (const item of planned.json.items.filter((i: { file: string | null }) => i.file !== null)) expect(item.action, JSON.stringify(item)).toBe("invalid");
    assertNothingForeign(planned.text);
    const applied = await call(applyRoute.POST, "POST", { token: admin, body: { files, expected: planned.json.expected } });
    expect(applied.status, applied.text).toBe(422);
    assertNothingForeign(applied.text);
  });

  it.each(Object.keys(CONTEXTS))("%s: stored by hand past every check, no payload runs for the editor, the viewer, an embed or a public link", async (context) => {
    const { system } = await getDb();
    // One published, embedded dashboard per place; each payload is written over it in turn.
    const slug = slugFor();
    const benign = `${HEADER(slug)}spec:\n  tabs: [{ id: main, name: Main, widgets: [w] }]\n${TABLE_WIDGET(`{ kind: sql, query: "SELECT o.channel FROM orders o LIMIT 1" }`)}`;
    expect((await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: manager, body: { name: slug, slug, spec_yaml: benign } })).status).toBe(201);
    expect((await call(publish.POST, "POST", { token: manager, params: { id: slug } })).status).toBe(200);
    const made = await call(embed.POST, "POST", { token: manager, params: { id: slug } });
    expect(made.status, made.text).toBe(201);
    for (const [, expression] of PAYLOADS) {
      const hostile = CONTEXTS[context](slug, expression);
      await system.query("UPDATE dashboard_versions SET spec_yaml = $1 WHERE dashboard_id = (SELECT id FROM dashboards WHERE slug = $2)", [hostile, slug]);
      await system.query("UPDATE dashboards SET draft_yaml = $1 WHERE slug = $2", [hostile, slug]);

      const answers = [
        await call(query.POST, "POST", { token: manager, params: { id: slug }, body: { filters: {} } }),
        await call(query.POST, "POST", { token: manager, params: { id: slug }, body: { filters: {}, version: "draft" } }),
        await call(embedQuery.POST, "POST", "/api/v1/embed/query", { body: { token: made.json.token } }),
        await call(publicQuery.POST, "POST", "/api/v1/public/query", { body: { org: "acme", slug } }),
      ];
      for (const res of answers) {
        // Refused whole (422 to the editor, 401/403/503 to a link) or the widget's own error; never a 500, never rows.
        expect([200, 401, 403, 422, 503], res.text).toContain(res.status);
        assertNothingForeign(res.text);
        const widget = res.json?.widgets?.w;
        if (widget !== undefined) expect(widget.rows ?? [], res.text).toEqual([]);
      }
    }
    // Nothing ran: no session of this database other than the application's own (its job queue locks) holds an advisory lock.
    const [locks] = await system.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND a.usename <> current_user`,
    );
    expect(locks.n).toBe(0);
    const [orders] = await system.query<{ n: number }>("SELECT count(*)::int AS n FROM orders");
    expect(orders.n).toBeGreaterThan(0);
  }, 300_000);
});
