import { randomBytes } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { configSingleton } from "@/lib/config";
import { loadConfig } from "@/lib/config/schema";
import { call, tokenFor } from "@/test/helpers";
import * as uploads from "../uploads/route";
import * as preview from "../uploads/[id]/route";
import * as tables from "./route";
import * as table from "./[name]/route";

/* The tables API over real routes and a real database (both engines): upload, preview, load, list, get, drop. */

let admin: string;
let analyst: string;
let globexAdmin: string;
beforeAll(async () => {
  [admin, analyst, globexAdmin] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")]);
});
const uniqueName = (prefix: string) => `${prefix}_${randomBytes(4).toString("hex")}`;

const CSV = "Region,Spend,Day\nEast,12.50,2026-01-01\nWest,7,2026-01-02\nEast,,2026-01-03\n";

const upload = (csv: string, token: string = admin, filename = "spend.csv") =>
  call(uploads.POST, "POST", `/api/v1/data/uploads?filename=${filename}&format=csv`, { token, rawBody: csv, headers: { "content-type": "text/csv" } });

const loadBody = (uploadId: string, name: string, extra: Record<string, unknown> = {}) => ({
  upload_id: uploadId,
  table: name,
  mode: "create",
  columns: [
    { name: "region", type: "text", from: 0 },
    { name: "spend", type: "numeric", from: 1 },
    { name: "day", type: "date", from: 2 },
  ],
  ...extra,
});

afterEach(() => configSingleton.set(undefined));

describe("/api/v1/data", () => {
  it("uploads a file, previews it with types inferred over every row, loads it, lists and drops the table", async () => {
    const uploaded = await upload(CSV);
    expect(uploaded.status).toBe(200);
    expect(uploaded.json).toMatchObject({ header: ["Region", "Spend", "Day"], names: ["region", "spend", "day"], types: ["text", "numeric", "date"], row_count: 3 });
    expect(uploaded.json.rows[2]).toEqual(["East", null, "2026-01-03"]);
    const again = await call(preview.GET, "GET", `/api/v1/data/uploads/${uploaded.json.id}`, { token: admin, params: { id: uploaded.json.id } });
    expect(again.status).toBe(200);
    expect(again.json.types).toEqual(["text", "numeric", "date"]);

    const name = uniqueName("spend");
    const loaded = await call(tables.POST, "POST", { token: admin, body: loadBody(uploaded.json.id, name) });
    expect(loaded.status).toBe(200);
    expect(loaded.json).toMatchObject({ table: name, mode: "create", rows_loaded: 3, rows_skipped: 0, row_count: 3 });

    const list = await call(tables.GET, "GET", { token: analyst });
    expect(list.status).toBe(200);
    const listed = list.json.items.find((t: { name: string }) => t.name === name);
    expect(listed).toMatchObject({ row_count: 3, columns: [{ name: "region", type: "text" }, { name: "spend", type: "numeric" }, { name: "day", type: "date" }], readers: [] });
    expect((await call(table.GET, "GET", { token: analyst, params: { name } })).json.name).toBe(name);

    expect((await call(table.DELETE, "DELETE", `/api/v1/data/tables/${name}`, { token: admin, params: { name } })).status).toBe(204);
    const gone = await call(table.GET, "GET", { token: analyst, params: { name } });
    expect(gone.status).toBe(404);
    expect(gone.json.detail).toContain(name);
  });

  it("answers 401 without a token, 403 to a non-admin, 404 for another organization's table or upload", async () => {
    expect((await call(tables.GET, "GET", {})).status).toBe(401);
    const refused = await upload(CSV, analyst);
    expect(refused.status).toBe(403);
    expect(refused.json.detail).toBeTruthy();
    const uploaded = await upload(CSV);
    const name = uniqueName("mine");
    expect((await call(tables.POST, "POST", { token: admin, body: loadBody(uploaded.json.id, name) })).status).toBe(200);
    expect((await call(tables.POST, "POST", { token: analyst, body: loadBody(uploaded.json.id, uniqueName("no")) })).status).toBe(403);
    const other = await call(table.GET, "GET", { token: globexAdmin, params: { name } });
    expect(other.status).toBe(404);
    expect((await call(table.DELETE, "DELETE", `/api/v1/data/tables/${name}`, { token: globexAdmin, params: { name } })).status).toBe(404);
    const foreignUpload = await call(tables.POST, "POST", { token: globexAdmin, body: loadBody(uploaded.json.id, uniqueName("theirs")) });
    expect(foreignUpload.status).toBe(404);
    expect(foreignUpload.json.detail).toMatch(/Upload/);
  });

  it("answers 422 naming row, column and value for a bad value, and keeps nothing; 409 for a create over an existing table", async () => {
    const uploaded = await upload("a,b\n1,x\n2,3\nnine,4\n");
    const name = uniqueName("typed");
    const body = { upload_id: uploaded.json.id, table: name, mode: "create", columns: [{ name: "a", type: "integer", from: 0 }, { name: "b", type: "text", from: 1 }] };
    const bad = await call(tables.POST, "POST", { token: admin, body });
    expect(bad.status).toBe(422);
    expect(bad.json.detail).toEqual([expect.objectContaining({ loc: ["rows", 3, "a"], type: "bad_value", msg: expect.stringContaining('"nine"') })]);
    expect((await call(table.GET, "GET", { token: admin, params: { name } })).status).toBe(404);
    const skipped = await call(tables.POST, "POST", { token: admin, body: { ...body, on_bad_row: "skip" } });
    expect(skipped.status).toBe(200);
    expect(skipped.json).toMatchObject({ rows_loaded: 2, rows_skipped: 1, bad_rows: [{ row: 3, column: "a", value: "nine" }] });
    const again = await call(tables.POST, "POST", { token: admin, body });
    expect(again.status).toBe(409);
    expect(again.json.detail).toMatch(/exists/);
    const badName = await call(tables.POST, "POST", { token: admin, body: { ...body, table: "orders", mode: "create" } });
    expect(badName.status).toBe(422);
    expect(JSON.stringify(badName.json.detail)).toMatch(/warehouse/);
  });

  it("answers 409 listing the readers when a published dashboard reads the table, and drops it when forced", async () => {
    const { getDb } = await import("@/lib/db/client");
    const { system } = await getDb();
    const uploaded = await upload(CSV);
    const name = uniqueName("read");
    await call(tables.POST, "POST", { token: admin, body: loadBody(uploaded.json.id, name) });
    const id = `dsh_${name}`;
    await system.query("INSERT INTO dashboards (id, org_id, name, slug, draft_yaml, published_version, created_by, updated_by) VALUES ($1, 'org_acme', $2, $2, '', 1, 'usr_acme_admin', 'usr_acme_admin')", [id, name]);
    await system.query("INSERT INTO dashboard_versions (org_id, dashboard_id, version, name, spec_yaml, published_by) VALUES ('org_acme', $1, 1, $2, $3, 'usr_acme_admin')", [id, name, `widgets: [{sql: "SELECT * FROM ${name}"}]`]);
    const refused = await call(table.DELETE, "DELETE", `/api/v1/data/tables/${name}`, { token: admin, params: { name } });
    expect(refused.status).toBe(409);
    expect(refused.json.detail.readers).toEqual([{ kind: "dashboard", id, name }]);
    const listed = (await call(tables.GET, "GET", { token: admin })).json.items.find((t: { name: string }) => t.name === name);
    expect(listed.readers).toEqual([{ kind: "dashboard", id, name }]);
    expect((await call(table.DELETE, "DELETE", `/api/v1/data/tables/${name}?force=true`, { token: admin, params: { name } })).status).toBe(204);
    await system.query("DELETE FROM dashboards WHERE id = $1", [id]);
  });

  it("answers 413 for a file over the organization's byte limit and for a table past the table limit, before any work", async () => {
    configSingleton.set(loadConfig({ ...process.env, QUARRY_DATA_MAX_BYTES: "20" }));
    const big = await upload(CSV);
    expect(big.status).toBe(413);
    expect(big.json.detail).toMatch(/limit/);
    configSingleton.set(undefined);
    const uploaded = await upload(CSV);
    const count = (await call(tables.GET, "GET", { token: admin })).json.items.length;
    configSingleton.set(loadConfig({ ...process.env, QUARRY_DATA_MAX_TABLES: String(count) }));
    const over = await call(tables.POST, "POST", { token: admin, body: loadBody(uploaded.json.id, uniqueName("over")) });
    expect(over.status).toBe(413);
    expect(over.json.detail).toMatch(/QUARRY_DATA_MAX_TABLES/);
  });
});

describe("a dashboard over an organization's table", () => {
  const manifest = (table: string) => `version: "1.0"
kind: dashboard
metadata: { id: spend, name: Spend }
spec:
  datasets:
    - id: spend
      from: ${table}
      dimensions:
        - { id: region, column: ${table}.region }
      metrics:
        - { id: total, type: sql, expression: sum(${table}.spend) }
  tabs:
    - { id: main, name: Main, widgets: [by_region, raw] }
---
version: "1.0"
kind: widget
metadata: { id: by_region, name: By region }
spec:
  component: table
  layout: { x: 0, y: 0, w: 6, h: 3 }
  data: { kind: dataset, dataset: spend, columns: [region, total] }
---
version: "1.0"
kind: widget
metadata: { id: raw, name: Raw }
spec:
  component: table
  layout: { x: 6, y: 0, w: 6, h: 3 }
  data: { kind: sql, query: "SELECT count(*) AS n FROM ${table}" }
`;

  it("saves, validates and answers by the table's stable name; another organization's save of the same manifest is refused", async () => {
    const dashboards = await import("../../custom-dashboards/route");
    const query = await import("../../custom-dashboards/[id]/query/route");
    const uploaded = await upload(CSV);
    const name = uniqueName("dash");
    expect((await call(tables.POST, "POST", { token: admin, body: loadBody(uploaded.json.id, name) })).status).toBe(200);
    const created = await call(dashboards.POST, "POST", { token: admin, body: { name, slug: name.replaceAll("_", "-"), spec_yaml: manifest(name) } });
    expect(created.status).toBe(201);
    const answered = await call(query.POST, "POST", `/api/v1/custom-dashboards/${created.json.id}/query`, { token: admin, params: { id: created.json.id }, body: { version: "draft" } });
    expect(answered.status).toBe(200);
    const byRegion = answered.json.widgets.by_region.rows.map((r: { region: string; total: number | string }) => [r.region, Number(r.total)]).sort();
    expect(byRegion).toEqual([["East", 12.5], ["West", 7]]);
    expect(Number(answered.json.widgets.raw.rows[0].n)).toBe(3);

    const theirs = await call(dashboards.POST, "POST", { token: globexAdmin, body: { name, slug: name.replaceAll("_", "-"), spec_yaml: manifest(name) } });
    expect(theirs.status).toBe(422);
    const unknown = await call(dashboards.POST, "POST", { token: globexAdmin, body: { name, slug: `${name.replaceAll("_", "-")}-x`, spec_yaml: manifest("no_such_table") } });
    expect(JSON.stringify(theirs.json.detail).replaceAll(name, "<t>")).toBe(JSON.stringify(unknown.json.detail).replaceAll("no_such_table", "<t>"));
  });
});

describe("dashboards-as-code plan over an organization's table", () => {
  it("checks the table and its columns: valid for its organization, a wrong column named with its line, another organization's plan invalid", async () => {
    const plan = await import("../../custom-dashboards/%5Fplan/route");
    const uploaded = await upload(CSV);
    const name = uniqueName("planned");
    await call(tables.POST, "POST", { token: admin, body: loadBody(uploaded.json.id, name) });
    const yaml = `version: "1.0"
kind: dashboard
metadata: { id: planned, name: Planned }
spec:
  datasets:
    - id: spend
      from: ${name}
      dimensions:
        - { id: region, column: ${name}.region }
      metrics:
        - { id: total, type: sql, expression: sum(${name}.spend) }
  tabs:
    - { id: main, name: Main, widgets: [by_region] }
---
version: "1.0"
kind: widget
metadata: { id: by_region, name: By region }
spec:
  component: table
  layout: { x: 0, y: 0, w: 6, h: 3 }
  data: { kind: dataset, dataset: spend, columns: [region, total] }
`;
    const planOf = async (token: string, content: string) => (await call(plan.POST, "POST", { token, body: { files: [{ path: `${name.replaceAll("_", "-")}.yaml`, content }] } })).json;
    expect((await planOf(admin, yaml)).valid).toBe(true);
    const wrong = await planOf(admin, yaml.replace(`sum(${name}.spend)`, `sum(${name}.spent)`));
    expect(wrong.valid).toBe(false);
    expect(wrong.items[0].errors).toEqual([expect.objectContaining({ line: 11, message: expect.stringContaining("spent") })]);
    const theirs = await planOf(globexAdmin, yaml);
    expect(theirs.valid).toBe(false);
    expect(theirs.items[0].errors[0]).toMatchObject({ line: 7, message: expect.stringContaining(`table "${name}" is not allowed`) });
  });
});

describe("API keys", () => {
  it("a key with data:write uploads and loads; a key without it is refused (403)", async () => {
    const keys = await import("../../api-keys/route");
    const make = async (scopes: string[]) => (await call(keys.POST, "POST", { token: admin, body: { name: `data ${scopes.join(" ")}`, scopes } })).json.key as string;
    const [writer, reader] = await Promise.all([make(["data:write"]), make(["dashboards:read"])]);
    const uploaded = await upload(CSV, writer);
    expect(uploaded.status).toBe(200);
    const name = uniqueName("by_key");
    expect((await call(tables.POST, "POST", { token: writer, body: loadBody(uploaded.json.id, name) })).status).toBe(200);
    const refused = await upload(CSV, reader);
    expect(refused.status).toBe(403);
    expect(refused.json.detail).toMatch(/data:write/);
    expect((await call(table.DELETE, "DELETE", `/api/v1/data/tables/${name}`, { token: reader, params: { name } })).status).toBe(403);
  });
});
