import { describe, expect, it } from "vitest";
import { SqlNotAllowed, checkExpression, checkSource, checkStatement } from "./sql-allow-list";

/** The reason a statement is refused, or null when it is accepted. */
function refusal(sql: string, options?: { allowParams?: boolean }): string | null {
  try {
    checkStatement(sql, options);
    return null;
  } catch (error) {
    if (error instanceof SqlNotAllowed) return error.message;
    throw error;
  }
}

/*
 * The escape corpus: every way past the old lexer that was found (docs/security.md), and the
 * neighbours of each. Each must be refused by the parser-based allow-list, whatever its spelling.
 */
const ESCAPES: [string, RegExp][] = [
  // SQL run from inside a string literal by a function that executes SQL text.
  ["SELECT ts_rewrite('a'::tsquery, 'SELECT set_config(''role'',''none'',true)')", /function ts_rewrite\(\)/],
  ["SELECT ts_stat('SELECT to_tsvector(password_hash) FROM users')", /function ts_stat\(\)/],
  ["SELECT query_to_xml('SELECT * FROM users', true, true, '')", /function query_to_xml\(\)/],
  // Unicode-escaped identifiers written without spaces.
  [`SELECT U&"set!005fconfig"UESCAPE'!'('role','none',true)`, /function set_config\(\)/],
  [`SELECT U&"query!005fto!005fxml"UESCAPE'!'('select 1',true,true,'')`, /function query_to_xml\(\)/],
  [`SELECT U&"pg\\005fsleep"(10)`, /function pg_sleep\(\)/],
  [`SELECT "pg_catalog"."set_config"('role', 'none', true)`, /function pg_catalog\.set_config\(\)/],
  ["SELECT PG_CATALOG.SET_CONFIG('role', 'none', true)", /function pg_catalog\.set_config\(\)/],
  ["SELECT pg_sleep_for('1 minute')", /pg_sleep_for/],
  ["SELECT pg_advisory_lock(1)", /pg_advisory_lock/],
  ["SELECT lo_import('/etc/passwd')", /lo_import/],
  ["SELECT pg_read_file('/etc/passwd')", /pg_read_file/],
  ["SELECT dblink('host=x', 'select 1')", /dblink/],
  ["SELECT current_setting('app.org_id')", /current_setting/],
  ["SELECT public.quarry_enter_tenant('org_globex', '', 'quarry_reader', null, null)", /quarry_enter_tenant/],
  ["SELECT repeat('x', 500000000)", /function repeat\(\)/],
  ["SELECT database_to_xml(true, true, '')", /database_to_xml/],
  ["SELECT * FROM ROWS FROM (query_to_xml('select 1', true, true, '')) AS x", /query_to_xml/],
  ["SELECT * FROM orders o, LATERAL (SELECT cursor_to_xml('c', 1, true, true, '')) x", /cursor_to_xml/],
  // Tables outside the warehouse, however named or reached.
  ["SELECT email, password_hash FROM users", /table "users"/],
  ["SELECT * FROM public.users", /table "public\.users"/],
  [`SELECT * FROM "users"`, /table "users"/],
  [`SELECT * FROM U&"u!0073ers"UESCAPE'!'`, /table "users"/],
  ["SELECT * FROM pg_catalog.pg_authid", /pg_authid/],
  ["SELECT * FROM pg_stat_activity", /pg_stat_activity/],
  ["SELECT * FROM information_schema.tables", /information_schema\.tables/],
  ["SELECT * FROM quarry_tenant_key", /quarry_tenant_key/],
  ["SELECT * FROM pgboss.job", /pgboss\.job/],
  ["SELECT (SELECT password_hash FROM users LIMIT 1) FROM orders", /table "users"/],
  ["SELECT 1 UNION SELECT password_hash FROM users", /table "users"/],
  ["SELECT * FROM orders WHERE EXISTS (SELECT 1 FROM users)", /table "users"/],
  // A CTE name outside its scope is the real table of that name.
  ["SELECT * FROM (WITH users AS (SELECT 1) SELECT 1) a, users", /table "users"/],
  ["WITH users AS (SELECT * FROM users) SELECT * FROM users", /table "users"/],
  ["WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a", /table "b"/],
  // Writes, locks, more than one statement, other statements.
  ["WITH gone AS (DELETE FROM orders RETURNING *) SELECT * FROM gone", /may only read/],
  ["WITH x AS (UPDATE orders SET amount = 0 RETURNING 1) SELECT * FROM x", /may only read/],
  ["SELECT * INTO stolen FROM orders", /SELECT INTO/],
  ["SELECT * FROM orders FOR UPDATE", /FOR UPDATE/],
  ["SELECT 1; SELECT 2", /only one SQL statement/],
  ["UPDATE orders SET amount = 0", /only read queries/],
  ["RESET ROLE", /only read queries/],
  ["SET ROLE quarry", /only read queries/],
  ["COPY orders TO '/tmp/x'", /only read queries/],
  ["EXPLAIN ANALYZE SELECT 1", /only read queries/],
  // Casts and constructs that look values up or build documents.
  ["SELECT 'pg_sleep'::regproc", /cast to pg_catalog\.regproc|cast to regproc/],
  ["SELECT 'users'::regclass", /regclass/],
  ["SELECT '<a/>'::xml", /cast to xml|cast to pg_catalog\.xml/],
  ["SELECT CAST('x' AS public.evil)", /public\.evil/],
  ["SELECT xmlelement(name a, 'x')", /XML/],
  ["SELECT * FROM orders TABLESAMPLE SYSTEM (10)", /TABLESAMPLE/],
  ["SELECT * FROM generate_series(1, 2) AS g(x int)", /column definition/],
  ["SELECT 1 OPERATOR(public.===) 1", /operator public\.===/],
  ["SELECT current_user", /CURRENT_USER/],
  ["SELECT session_user", /SESSION_USER/],
  // Functional notation: PostgreSQL runs (expr).f and alias.f as f(expr) when f is no column (issue 41).
  ["SELECT ('abc'::text).length", /field selection/],
  ["SELECT ($q$SELECT password_hash FROM users$q$::text).ts_stat", /field selection/],
  ["SELECT o.pg_column_size FROM orders o", /o\.pg_column_size is not a column of o/],
  ["SELECT orders.pg_terminate_backend FROM orders", /not a column of orders/],
  ["SELECT (o).pg_column_size FROM orders o", /field selection/],
  ["SELECT (o.amount).pg_sleep FROM orders o", /field selection/],
  ["SELECT ((1, 2)).f1", /field selection/],
  ["SELECT (ROW('search_path', 'pg_catalog', false)).set_config", /field selection/],
  ["SELECT s.set_config FROM (SELECT 'search_path' AS a) s", /s\.set_config is not a column of s/],
  ["SELECT x.pg_advisory_lock FROM generate_series(1, 2) AS x", /x\.pg_advisory_lock is not a column of x/],
  ["SELECT g.pg_sleep FROM generate_series(1, 2) AS g(n)", /not a column of g/],
  ["WITH t AS (SELECT 1 AS n) SELECT t.current_setting FROM t", /not a column of t/],
  ["SELECT j.pg_column_size FROM (orders JOIN products ON true) AS j", /not a column of j/],
  ["SELECT v.pg_sleep FROM (VALUES (1)) AS v", /not a column of v/],
  ["SELECT u.txid_current FROM (SELECT 1 UNION SELECT 2) AS u", /not a column of u/],
  ["SELECT public.orders.amount FROM orders", /public\.orders\.amount/],
  ["SELECT o.amount.pg_sleep FROM orders o", /o\.amount\.pg_sleep/],
  ["SELECT orders.pg_column_size FROM orders o", /"orders" is not a table of this query/],
  ["SELECT * FROM orders WHERE orders.xmin::text <> ''", /not a column of orders/],
  ["SELECT a.length FROM (SELECT 'x' || 'y') a", /not a column of a/],
  ["SELECT (SELECT o.pg_column_size) FROM orders o", /not a column of o/],
  ["SELECT 1 FROM orders o WHERE EXISTS (SELECT 1 FROM products p WHERE p.pg_sleep IS NULL)", /not a column of p/],
  // Text that grows without bound from a short row.
  ["SELECT format('%1$900000000s', 'x')", /function format\(\)/],
  ["SELECT replace(replace(replace(name, 'a', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'), 'a', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'), 'a', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa') FROM products", /times longer/],
  ["SELECT replace(name, 'a', name) FROM products", /must be written as text literals/],
  ["SELECT regexp_replace(name, '.*', repeat('x', 3)) FROM products", /function repeat|text literal/],
  // Bind parameters are Quarry's, not the author's.
  ["SELECT * FROM orders WHERE amount > $1", /bind parameters/],
  ["", /empty/],
  ["SELEC 1", /SQL error/],
];

describe("the allow-list refuses every known way out", () => {
  it.each(ESCAPES)("%s", (sql, reason) => {
    const why = refusal(sql);
    expect(why, sql).not.toBeNull();
    expect(why).toMatch(reason);
  });
});

const ACCEPTED = [
  "SELECT o.location_id, sum(o.amount) AS revenue FROM orders o GROUP BY 1 ORDER BY 2 DESC",
  "SELECT date_trunc('month', orders.order_date)::date AS month, count(*) FILTER (WHERE orders.channel = 'web') FROM orders GROUP BY 1",
  "WITH m AS (SELECT location_id, sum(amount) AS s FROM orders GROUP BY 1) SELECT l.name, m.s FROM m JOIN locations l ON l.id = m.location_id",
  "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) SELECT * FROM n",
  "SELECT rank() OVER (PARTITION BY location_id ORDER BY amount DESC), lag(amount) OVER w FROM orders WINDOW w AS (ORDER BY order_date)",
  "SELECT EXTRACT(year FROM order_date), order_date AT TIME ZONE 'UTC', now() - interval '7 days', CURRENT_DATE FROM orders",
  "SELECT CASE WHEN amount BETWEEN 10 AND 20 THEN 'mid' ELSE 'other' END, coalesce(channel, '?'), greatest(amount, cost), nullif(cost, 0) FROM orders",
  "SELECT * FROM orders WHERE channel IN ('web', 'store') AND channel LIKE 'w%' AND channel ILIKE '%E%' AND amount IS NOT NULL",
  "SELECT round(avg(amount)::numeric, 2), percentile_cont(0.5) WITHIN GROUP (ORDER BY amount) FROM orders",
  "SELECT category, channel, sum(amount) FROM orders JOIN products p ON p.id = orders.product_id GROUP BY GROUPING SETS ((category), (channel), ())",
  "SELECT d::date FROM generate_series(DATE '2024-01-01', DATE '2024-12-01', interval '1 month') AS g(d)",
  "SELECT t.month, t.target_amount FROM public.sales_targets t WHERE t.month >= date_trunc('year', now())",
  "SELECT 1 UNION SELECT 2 EXCEPT SELECT 3",
  "VALUES (1, 'a'), (2, 'b')",
  "TABLE orders",
  "SELECT to_char(order_date, 'YYYY-MM'), split_part(channel, '-', 1), upper(substring(channel FROM 1 FOR 3)), trim(both ' ' from channel) FROM orders",
  "SELECT jsonb_build_object('a', 1)->>'a', (ARRAY[1, 2])[1], (SELECT max(amount) FROM orders)",
  "SELECT make_interval(days => 3), date_part('dow', now())",
  "SELECT x FROM orders o, LATERAL (SELECT o.amount * 2 AS x) y",
  "SELECT s.count, s.max FROM (SELECT count(*), max(amount) FROM orders) s",
  "SELECT c.month, c.int4 FROM (SELECT date_trunc('month', order_date) AS month, 1::int FROM orders) c",
  "SELECT row_to_json(o) FROM orders o",
  "SELECT o.* FROM orders o JOIN products USING (product_id)",
  "SELECT replace(replace(name, '-', ' '), '_', ' '), regexp_replace(name, '\\s+', ' ', 'g') FROM products",
  "SELECT (SELECT max(p.unit_price) FROM products p WHERE p.id = o.product_id) FROM orders o",
  "SELECT u.n FROM unnest(ARRAY[1, 2]) WITH ORDINALITY AS u(n, i)",
  "SELECT channel AS c FROM orders GROUP BY c ORDER BY c",
];

describe("the allow-list accepts what dashboards are written with", () => {
  it.each(ACCEPTED)("%s", (sql) => {
    expect(refusal(sql)).toBeNull();
  });

  it("accepts Quarry's own bind parameters in a compiled statement only", () => {
    const compiled = "SELECT row_to_json(_quarry_row.*) AS row FROM (SELECT * FROM orders WHERE orders.order_date >= $1 LIMIT $2::int) AS _quarry_row";
    expect(refusal(compiled, { allowParams: true })).toBeNull();
    expect(refusal(compiled)).toMatch(/bind parameters/);
  });
});

describe("fragments spliced into a generated statement", () => {
  it("checks an expression and points at the refused call inside it", () => {
    expect(() => checkExpression("sum(orders.amount)", "orders")).not.toThrow();
    const error = (() => {
      try {
        checkExpression(`sum(orders.amount) + length(U&"query!005fto!005fxml"UESCAPE'!'('select 1', true, true, '')::text)`, "orders");
      } catch (e) {
        return e as SqlNotAllowed;
      }
    })();
    expect(error?.message).toMatch(/query_to_xml/);
    expect(error?.position).toBe(28);
  });

  it("resolves an expression's names against the source it runs over", () => {
    expect(() => checkExpression("o.pg_column_size", "orders o")).toThrow(/not a column of o/);
    expect(() => checkExpression("sum(o.amount)", "orders o JOIN locations l ON l.id = o.location_id")).not.toThrow();
    expect(() => checkExpression("sum(orders.amount)", "orders o")).toThrow(/"orders" is not a table of this query/);
    expect(() => checkExpression("q.revenue", '(\nSELECT sum(amount) AS revenue FROM orders\n) AS "q"')).not.toThrow();
    expect(() => checkExpression("q.ts_stat", '(\nSELECT sum(amount) AS revenue FROM orders\n) AS "q"')).toThrow(/ts_stat\(q\)/);
  });

  it("checks a source", () => {
    expect(() => checkSource("orders JOIN locations ON locations.id = orders.location_id")).not.toThrow();
    expect(() => checkSource("orders, users")).toThrow(/table "users"/);
    expect(() => checkSource("(SELECT * FROM pg_shadow) s")).toThrow(/pg_shadow/);
  });
});
