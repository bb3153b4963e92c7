import fs from "node:fs";
import path from "node:path";
import { decodeJwt } from "jose";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as one from "@/app/api/v1/custom-dashboards/[id]/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as embed from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import * as embeds from "@/app/api/v1/custom-dashboards/[id]/embeds/route";
import * as revoke from "@/app/api/v1/custom-dashboards/[id]/embeds/[embed_id]/route";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as seed from "@/app/api/v1/custom-dashboards/%5Fseed/route";
import * as embedQuery from "@/app/api/v1/embed/query/route";
import { getDb } from "@/lib/db/client";
import { loadTable } from "@/lib/data/load";
import { call, tokenFor, tokenForMember } from "@/test/helpers";

const SMALL = fs.readFileSync(path.join(import.meta.dirname, "fixtures/small-dashboard.yaml"), "utf8");
let admin: string, analyst: string, gm: string, globex: string;

beforeAll(async () => {
  [admin, analyst, gm, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("acme", "general_manager"), tokenFor("globex", "admin")]);
});

async function create(slug: string, token = admin, spec_yaml = SMALL) {
  return call(list.POST, "POST", "/api/v1/custom-dashboards", { token, body: { name: `Dash ${slug}`, slug, spec_yaml } });
}

async function sqlValue(sql: string, params: unknown[] = []): Promise<number> {
  const { system } = await getDb();
  const [row] = await system.query<{ v: string | number }>(sql, params);
  return Number(row.v);
}

describe("dashboards API", () => {
  it("creates a dashboard and returns its record", async () => {
    const res = await create("created");
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ slug: "created", status: "draft", published_version: null, org_id: "org_acme", draft_revision: 1 });
    expect(res.json.widgets.map((w: { id: string }) => w.id)).toEqual(["location", "period", "revenue_kpi", "by_channel", "note"]);
    expect(res.json.created_at).toMatch(/Z$/);
  });

  it("rejects a manifest mistake with its line and column, all at once", async () => {
    const broken = SMALL.replace("component: kpi", "component: gauge-ish").replace("dataset: sales\n    columns: [channel", "dataset: nope\n    columns: [channel");
    const res = await create("broken", admin, broken);
    expect(res.status).toBe(422);
    expect(res.json.detail.length).toBeGreaterThanOrEqual(2);
    for (const item of res.json.detail) {
      expect(item.line).toBeGreaterThan(0);
      expect(item.msg).toMatch(new RegExp(`^${item.line}:${item.column} `));
    }
  });

  it("answers 409 for a duplicate slug and 403 for analysts", async () => {
    await create("dup");
    expect((await create("dup")).status).toBe(409);
    expect((await create("by-analyst", analyst)).status).toBe(403);
  });

  it("keeps the published version immutable while the draft changes", async () => {
    const { json: created } = await create("immutable");
    const published = await call(publish.POST, "POST", { token: gm, params: { id: created.id } });
    expect(published.status).toBe(200);
    expect(published.json).toMatchObject({ status: "published", published_version: 1, has_unpublished_changes: false });

    const edited = SMALL.replace("name: Small sales", "name: Edited sales");
    const put = await call(one.PUT, "PUT", { token: admin, params: { id: "immutable" }, body: { spec_yaml: edited } });
    expect(put.json).toMatchObject({ draft_revision: 2, has_unpublished_changes: true, published_version: 1 });

    // Viewers see the published manifest, not the draft.
    const viewer = await call(one.GET, "GET", { token: analyst, params: { id: "immutable" } });
    expect(viewer.status).toBe(200);
    expect(viewer.json.spec_yaml).toContain("name: Small sales");
    // The database itself refuses to change a published version.
    const { system } = await getDb();
    await system.exec("SET ROLE quarry_app");
    try {
      await expect(system.query("UPDATE dashboard_versions SET spec_yaml = 'x'")).rejects.toThrow(/permission denied/);
    } finally {
      await system.exec("RESET ROLE");
    }
    // The rollups it declared are recorded with it, once (migration 0038), not even the owner rewrites them.
    await expect(system.query("UPDATE dashboard_versions SET rollup_ids = '{rlp_x}' WHERE dashboard_id = (SELECT id FROM dashboards WHERE slug = 'immutable')")).rejects.toThrow(/recorded once/);
  });

  it("shows analysts only published dashboards whose roles include theirs", async () => {
    await create("draft-only");
    const restricted = SMALL.replace("roles: [admin, general_manager, analyst]", "roles: [admin]");
    const { json } = await create("admins-only", admin, restricted);
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    const res = await call(list.GET, "GET", "/api/v1/custom-dashboards", { token: analyst });
    const slugs = res.json.items.map((d: { slug: string }) => d.slug);
    expect(slugs).not.toContain("draft-only");
    expect(slugs).not.toContain("admins-only");
    expect((await call(one.GET, "GET", { token: analyst, params: { id: "admins-only" } })).status).toBe(404);
    expect((await call(publish.POST, "POST", { token: analyst, params: { id: json.id } })).status).toBe(403);
  });

  it("shows globex nothing of acme's dashboards", async () => {
    const { json } = await create("secret");
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    expect((await call(one.GET, "GET", { token: globex, params: { id: json.id } })).status).toBe(404);
    expect((await call(one.GET, "GET", { token: globex, params: { id: "secret" } })).status).toBe(404);
    expect((await call(query.POST, "POST", { token: globex, params: { id: json.id }, body: {} })).status).toBe(404);
    expect((await call(embed.POST, "POST", { token: globex, params: { id: json.id } })).status).toBe(404);
    expect((await call(publish.POST, "POST", { token: globex, params: { id: json.id } })).status).toBe(404);
    expect((await call(one.DELETE, "DELETE", { token: globex, params: { id: json.id } })).status).toBe(404);
    const listed = await call(list.GET, "GET", "/api/v1/custom-dashboards", { token: globex });
    expect(listed.json.items.map((d: { id: string }) => d.id)).not.toContain(json.id);
  });

  it("computes widget data that matches hand-written SQL, per filter", async () => {
    const { json } = await create("numbers");
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    const all = await call(query.POST, "POST", { token: analyst, params: { id: json.id }, body: {} });
    expect(all.status).toBe(200);
    const total = await sqlValue("SELECT sum(amount) AS v FROM orders WHERE org_id = 'org_acme'");
    expect(all.json.widgets.revenue_kpi.error).toBeNull();
    expect(Number(all.json.widgets.revenue_kpi.rows[0].revenue)).toBeCloseTo(total, 2);

    const nyc = await call(query.POST, "POST", { token: analyst, params: { id: json.id }, body: { filters: { location: "loc_acme_nyc" } } });
    const nycTotal = await sqlValue("SELECT sum(amount) AS v FROM orders WHERE org_id = 'org_acme' AND location_id = 'loc_acme_nyc'");
    expect(Number(nyc.json.widgets.revenue_kpi.rows[0].revenue)).toBeCloseTo(nycTotal, 2);
    const channelRows = nyc.json.widgets.by_channel.rows as { channel: string; orders_count: number }[];
    const nycOnline = await sqlValue("SELECT count(*) AS v FROM orders WHERE org_id = 'org_acme' AND location_id = 'loc_acme_nyc' AND channel = 'online'");
    expect(Number(channelRows.find((r) => r.channel === "online")?.orders_count)).toBe(nycOnline);

    const month = await call(query.POST, "POST", {
      token: analyst,
      params: { id: json.id },
      body: { filters: { location: "loc_acme_nyc", period: "2026-03-01 to 2026-03-31" }, widget_ids: ["revenue_kpi"] },
    });
    const monthTotal = await sqlValue("SELECT sum(amount) AS v FROM orders WHERE org_id = 'org_acme' AND location_id = 'loc_acme_nyc' AND order_date >= '2026-03-01' AND order_date <= '2026-03-31'");
    expect(Object.keys(month.json.widgets)).toEqual(["revenue_kpi"]);
    expect(Number(month.json.widgets.revenue_kpi.rows[0].revenue)).toBeCloseTo(monthTotal, 2);

    // A location of another organization matches nothing: RLS, not the filter, decides.
    const foreign = await call(query.POST, "POST", { token: analyst, params: { id: json.id }, body: { filters: { location: "loc_globex_ber" } } });
    expect(foreign.json.widgets.revenue_kpi.rows[0]?.revenue ?? null).toBeNull();
  });

  it("serves unchanged widgets from the cache and recomputes affected ones", async () => {
    const { json } = await create("cached");
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    const first = await call(query.POST, "POST", { token: admin, params: { id: json.id }, body: { filters: { period: "2026-01-01" } } });
    expect(first.json.widgets.by_channel.cached).toBe(false);
    // `period` binds only revenue_kpi: the table is not recomputed.
    const second = await call(query.POST, "POST", { token: admin, params: { id: json.id }, body: { filters: { period: "2026-02-01" } } });
    expect(second.json.widgets.by_channel.cached).toBe(true);
    expect(second.json.widgets.revenue_kpi.cached).toBe(false);
  });

  it("answers from the cache until a load changes the table the widget reads, then the new rows at once", async () => {
    const table = `spend_${Date.now().toString(36)}`;
    const rows = (values: string[]) => ({
      header: ["channel", "spend"],
      rows: (async function* () {
        for (const value of values) yield ["web", value];
      })(),
    });
    const load = (mode: "create" | "append", values: string[]) =>
      loadTable({ orgId: "org_acme" }, { table, mode, onBadRow: "fail", columns: [{ name: "channel", type: "text", from: 0 }, { name: "spend", type: "numeric", from: 1 }] }, rows(values));
    await load("create", ["10", "5"]);
    const manifest = [
      `version: "1.0"\nkind: dashboard\nmetadata: { id: load-fresh, name: Load fresh }\nplatform: { scope: org, roles: [admin], allow_embed: false, public: false }`,
      `spec:\n  datasets:\n    - id: spend\n      from: ${table}\n      dimensions: [{ id: channel, column: ${table}.channel }]\n      metrics: [{ id: revenue, type: sql, expression: sum(${table}.spend) }]`,
      `  tabs: [{ id: main, name: Main, widgets: [revenue_kpi] }]\n---`,
      `version: "1.0"\nkind: widget\nmetadata: { id: revenue_kpi, name: Spend }\nspec:\n  component: kpi\n  layout: { x: 0, y: 0, w: 3, h: 2 }`,
      `  data: { kind: dataset, dataset: spend, columns: [revenue], mappings: { value: revenue } }`,
    ].join("\n");
    const { json, status } = await create("load-fresh", admin, manifest);
    expect(status, JSON.stringify(json)).toBe(201);
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    const ask = async () => (await call(query.POST, "POST", { token: admin, params: { id: json.id }, body: { widget_ids: ["revenue_kpi"] } })).json.widgets.revenue_kpi;
    expect(await ask()).toMatchObject({ cached: false, rows: [{ revenue: 15 }] });
    expect(await ask()).toMatchObject({ cached: true, rows: [{ revenue: 15 }] });
    await load("append", ["7"]);
    expect(await ask()).toMatchObject({ cached: false, rows: [{ revenue: 22 }] });
    expect(await ask()).toMatchObject({ cached: true, rows: [{ revenue: 22 }] });
  });

  it("merges identical cold requests in flight: computed once, the same answers to both", async () => {
    const { json } = await create("in-flight");
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    const body = { filters: { period: "2026-03-01" } };
    const [a, b] = await Promise.all([
      call(query.POST, "POST", { token: admin, params: { id: json.id }, body }),
      call(query.POST, "POST", { token: admin, params: { id: json.id }, body }),
    ]);
    const flags = [a.json.widgets.by_channel.cached, b.json.widgets.by_channel.cached].sort();
    // Both computed (false, false) without the merge; one computed and one shared with it.
    expect(flags).toEqual([false, true]);
    expect(a.json.widgets.by_channel.rows).toEqual(b.json.widgets.by_channel.rows);
    expect(a.json.widgets.revenue_kpi.rows).toEqual(b.json.widgets.revenue_kpi.rows);
    // A different filter is a different request: not merged.
    const [c, d] = await Promise.all([
      call(query.POST, "POST", { token: admin, params: { id: json.id }, body: { filters: { period: "2026-04-01" } } }),
      call(query.POST, "POST", { token: admin, params: { id: json.id }, body: { filters: { period: "2026-05-01" } } }),
    ]);
    expect([c.json.widgets.revenue_kpi.cached, d.json.widgets.revenue_kpi.cached]).toEqual([false, false]);
  });

  it("reports one widget's failure without failing the others", async () => {
    const bad = SMALL.replace("expression: count(*)", "expression: count(*) / 0");
    const { json } = await create("one-fails", admin, bad);
    const res = await call(query.POST, "POST", { token: admin, params: { id: json.id }, body: { version: "draft" } });
    expect(res.status).toBe(200);
    expect(res.json.widgets.by_channel.error.detail).toBeTruthy();
    expect(res.json.widgets.revenue_kpi.error).toBeNull();
  });

  it("refuses to embed unpublished dashboards and issues tokens bound to the version", async () => {
    const { json } = await create("embeddable");
    expect((await call(embed.POST, "POST", { token: admin, params: { id: json.id } })).status).toBe(409);
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    const res = await call(embed.POST, "POST", {
      token: admin,
      params: { id: json.id },
      body: { locked_filters: { location: "loc_acme_bos" }, expires_in: 600, allowed_origins: ["https://partner.example.com/page"] },
    });
    expect(res.status).toBe(201);
    expect(res.json.iframe).toContain(`src="${res.json.url}"`);
    // Titled by the name the embedded page shows (the published manifest's), not the dashboard's id (issue 44 §7).
    expect(res.json.iframe).toContain('title="Small sales dashboard"');
    expect(res.json.iframe).not.toContain(json.id);
    expect(res.json.url).toContain(`/embed/${res.json.token}`);
    expect(res.json.allowed_origins).toEqual(["https://partner.example.com"]);
    expect(decodeJwt(res.json.token)).toMatchObject({ org: "org_acme", dsh: json.id, ver: 1 });

    // Locked filters win over what the page sends.
    const data = await call(embedQuery.POST, "POST", "/api/v1/embed/query", { body: { token: res.json.token, filters: { location: "loc_acme_nyc" } } });
    expect(data.status).toBe(200);
    const bos = await sqlValue("SELECT sum(amount) AS v FROM orders WHERE org_id = 'org_acme' AND location_id = 'loc_acme_bos'");
    expect(Number(data.json.widgets.revenue_kpi.rows[0].revenue)).toBeCloseTo(bos, 2);

    // The embed token is not a bearer token.
    expect((await call(list.GET, "GET", "/api/v1/custom-dashboards", { token: res.json.token })).status).toBe(401);

    // Tampered, then revoked.
    const [h, p, s] = res.json.token.split(".");
    const tampered = `${h}.${p}.${s.slice(0, -2)}${s.endsWith("AA") ? "BB" : "AA"}`;
    expect((await call(embedQuery.POST, "POST", { body: { token: tampered } })).status).toBe(401);
    const grants = await call(embeds.GET, "GET", { token: admin, params: { id: json.id } });
    expect(grants.json.items).toHaveLength(1);
    expect((await call(revoke.DELETE, "DELETE", { token: admin, params: { id: json.id, embed_id: res.json.embed_id } })).status).toBe(204);
    const revoked = await call(embedQuery.POST, "POST", { body: { token: res.json.token } });
    expect(revoked.status).toBe(401);
    expect(revoked.json.detail).toMatch(/revoked/);
  });

  it("embeds with the defaults when POST /embed carries no body and no Content-Type (curl -X POST)", async () => {
    const { json } = await create("bodyless-embed");
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    for (const options of [{}, { rawBody: new Uint8Array(0) }]) {
      const before = Date.now();
      const res = await call(embed.POST, "POST", `/api/v1/custom-dashboards/${json.id}/embed`, { token: admin, params: { id: json.id }, ...options });
      expect(res.status, JSON.stringify(res.json)).toBe(201);
      expect(res.json).toMatchObject({ dashboard_id: json.id, version: 1, locked_filters: {}, allowed_origins: [] });
      const lifetime = Date.parse(res.json.expires_at) - before;
      expect(lifetime).toBeGreaterThan(24 * 3600_000 - 60_000);
      expect(lifetime).toBeLessThan(24 * 3600_000 + 60_000);
    }
  });

  it("refuses to embed when the manifest does not allow it", async () => {
    const { json } = await create("no-embed", admin, SMALL.replace("allow_embed: true", "allow_embed: false"));
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    const res = await call(embed.POST, "POST", { token: admin, params: { id: json.id } });
    expect(res.status).toBe(403);
    expect(res.json.detail).toMatch(/allow_embed/);
  });

  it("seeds the sample dashboard idempotently (admin only)", async () => {
    expect((await call(seed.POST, "POST", { token: gm })).status).toBe(403);
    const first = await call(seed.POST, "POST", { token: admin });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ slug: "sample-sales", status: "published", published_version: 1 });
    const again = await call(seed.POST, "POST", { token: admin });
    expect(again.json).toMatchObject({ id: first.json.id, published_version: 1 });
    const data = await call(query.POST, "POST", { token: analyst, params: { id: "sample-sales" }, body: {} });
    const failing = Object.entries(data.json.widgets as Record<string, { error: unknown }>).filter(([, w]) => w.error);
    expect(failing).toEqual([]);
  });

  it("deletes a dashboard", async () => {
    const { json } = await create("to-delete");
    expect((await call(one.DELETE, "DELETE", { token: admin, params: { id: json.id } })).status).toBe(204);
    expect((await call(one.GET, "GET", { token: admin, params: { id: json.id } })).status).toBe(404);
  });
});

describe("dashboards API: audit of issue 4", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("matches hand-computed totals for date expressions in the organization's time zone", async () => {
    const { json } = await create("date-numbers");
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    // acme's time zone is America/New_York; order_date is a calendar date, so "today" is New York's today.
    const today = "(now() AT TIME ZONE 'America/New_York')::date";
    const cases: [string, string][] = [
      ["2026-02-14", "order_date = '2026-02-14'"],
      ["before 2025-01-01", "order_date < '2025-01-01'"],
      ["after 2026-10-31", "order_date > '2026-10-31'"],
      ["since 2026-11-01", "order_date >= '2026-11-01'"],
      ["yesterday", `order_date = ${today} - 1`],
      ["last 30 days", `order_date > ${today} - 30 AND order_date <= ${today}`],
      ["last month", `order_date >= date_trunc('month', ${today} - interval '1 month')::date AND order_date < date_trunc('month', ${today})::date`],
      ["this week", `order_date >= date_trunc('week', ${today})::date AND order_date < date_trunc('week', ${today})::date + 7`],
    ];
    for (const [expression, where] of cases) {
      const res = await call(query.POST, "POST", {
        token: analyst,
        params: { id: json.id },
        body: { filters: { period: expression, location: "loc_acme_chi" }, widget_ids: ["revenue_kpi"] },
      });
      expect(res.status, expression).toBe(200);
      expect(res.json.widgets.revenue_kpi.error, expression).toBeNull();
      const expected = await sqlValue(`SELECT coalesce(sum(amount), 0) AS v FROM orders WHERE org_id = 'org_acme' AND location_id = 'loc_acme_chi' AND ${where}`);
      expect(Number(res.json.widgets.revenue_kpi.rows[0]?.revenue ?? 0), expression).toBeCloseTo(expected, 2);
    }
    const bad = await call(query.POST, "POST", { token: analyst, params: { id: json.id }, body: { filters: { period: "the day after never" }, widget_ids: ["revenue_kpi"] } });
    expect(bad.json.widgets.revenue_kpi.error.detail).toMatch(/the day after never/);
  });

  it("drops cached results when a new version is published", async () => {
    const { json } = await create("republish");
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    const ask = () => call(query.POST, "POST", { token: analyst, params: { id: json.id }, body: { widget_ids: ["revenue_kpi"] } });
    expect((await ask()).json.widgets.revenue_kpi.cached).toBe(false);
    expect((await ask()).json.widgets.revenue_kpi.cached).toBe(true);
    const costs = SMALL.replace("expression: sum(orders.amount)", "expression: sum(orders.cost)");
    await call(one.PUT, "PUT", { token: admin, params: { id: json.id }, body: { spec_yaml: costs } });
    // Editing the draft does not touch what viewers see...
    const beforePublish = await ask();
    expect(beforePublish.json).toMatchObject({ version: 1, widgets: { revenue_kpi: { cached: true } } });
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    // ...publishing does, at once.
    const after = await ask();
    expect(after.json).toMatchObject({ version: 2, widgets: { revenue_kpi: { cached: false } } });
    const totalCost = await sqlValue("SELECT sum(cost) AS v FROM orders WHERE org_id = 'org_acme'");
    expect(Number(after.json.widgets.revenue_kpi.rows[0].revenue)).toBeCloseTo(totalCost, 2);
  });

  it("lets viewers query only the current published version", async () => {
    const { json } = await create("narrowed");
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    await call(one.PUT, "PUT", { token: admin, params: { id: json.id }, body: { spec_yaml: SMALL.replace("roles: [admin, general_manager, analyst]", "roles: [admin]") } });
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    for (const version of [1, 2, "published"]) {
      const res = await call(query.POST, "POST", { token: analyst, params: { id: json.id }, body: { version } });
      expect(res.status, String(version)).toBe(404);
    }
    expect((await call(query.POST, "POST", { token: gm, params: { id: json.id }, body: { version: 1 } })).status).toBe(200);
  });

  it("refuses an expired embed token with a clear detail", async () => {
    const { json } = await create("short-embed");
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    const grant = await call(embed.POST, "POST", { token: admin, params: { id: json.id }, body: { expires_in: 60 } });
    expect(grant.status).toBe(201);
    expect((await call(embedQuery.POST, "POST", { body: { token: grant.json.token } })).status).toBe(200);
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 61_000 });
    const expired = await call(embedQuery.POST, "POST", { body: { token: grant.json.token } });
    expect(expired.status).toBe(401);
    expect(expired.json.detail).toMatch(/expired/);
  });

  it("refuses locked filters that name no filter widget", async () => {
    const { json } = await create("locked-unknown");
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    const res = await call(embed.POST, "POST", { token: admin, params: { id: json.id }, body: { locked_filters: { revenue_kpi: 1 } } });
    expect(res.status).toBe(422);
    expect(res.json.detail[0]).toMatchObject({ loc: ["body", "locked_filters", "revenue_kpi"], type: "unknown_filter" });
  });

  it("gives globex 404 for acme's embed grants", async () => {
    const { json } = await create("embed-secret");
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    const grant = await call(embed.POST, "POST", { token: admin, params: { id: json.id } });
    expect((await call(embeds.GET, "GET", { token: globex, params: { id: json.id } })).status).toBe(404);
    expect((await call(revoke.DELETE, "DELETE", { token: globex, params: { id: json.id, embed_id: grant.json.embed_id } })).status).toBe(404);
    // globex's own dashboard path cannot reach acme's grant either.
    const theirs = await create("globex-own", globex);
    expect((await call(revoke.DELETE, "DELETE", { token: globex, params: { id: theirs.json.id, embed_id: grant.json.embed_id } })).status).toBe(404);
    expect((await call(embedQuery.POST, "POST", { body: { token: grant.json.token } })).status).toBe(200);
  });

  it("edits the draft with the same checks as creation", async () => {
    await create("taken-slug");
    const { json } = await create("editable");
    const put = (token: string, body: unknown, id = json.id) => call(one.PUT, "PUT", { token, params: { id }, body });
    expect((await put(admin, { slug: "taken-slug" })).status).toBe(409);
    // Slugs are unique per organization, not across them.
    expect((await create("taken-slug", globex)).status).toBe(201);
    const broken = await put(admin, { spec_yaml: SMALL.replace("w: 3, h: 2 }\n  data:", "w: 3, h: two }\n  data:") });
    expect(broken.status).toBe(422);
    expect(broken.json.detail).toContainEqual(expect.objectContaining({ line: 54, msg: expect.stringMatching(/^54:\d+ .*expected number/) }));
    expect((await put(admin, {})).status).toBe(422);
    expect((await put(analyst, { name: "Mine now" })).status).toBe(403);
    expect((await put(globex, { name: "Ours now" })).status).toBe(404);
    const renamed = await put(gm, { name: "Renamed", slug: "renamed" });
    expect(renamed.json).toMatchObject({ name: "Renamed", slug: "renamed", draft_revision: 2 });
    expect((await call(one.GET, "GET", { token: admin, params: { id: "renamed" } })).json.id).toBe(json.id);
  });

  it("rate limits the query endpoint per caller with 429 and Retry-After", async () => {
    const { json } = await create("hammered");
    const burst = await tokenForMember("acme", "admin", "usr_acme_burst");
    const ask = (token: string) => call(query.POST, "POST", { token, params: { id: json.id }, body: { version: "draft", widget_ids: [] } });
    for (let i = 0; i < 120; i++) expect((await ask(burst)).status).toBe(200);
    const limited = await ask(burst);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.json.detail).toMatch(/Too many requests/);
    // Another caller of the same organization is not affected.
    expect((await ask(admin)).status).toBe(200);
  });
  it("recomputes on a forced refresh, at most 10 times a minute per caller", async () => {
    const { json } = await create("refreshed");
    const refresher = await tokenForMember("acme", "analyst", "usr_acme_refresher");
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    const ask = (body: object) => call(query.POST, "POST", { token: refresher, params: { id: json.id }, body: { widget_ids: ["revenue_kpi"], ...body } });
    await ask({});
    expect((await ask({})).json.widgets.revenue_kpi.cached).toBe(true);
    for (let i = 0; i < 10; i++) {
      const fresh = await ask({ refresh: true });
      expect(fresh.status).toBe(200);
      expect(fresh.json.widgets.revenue_kpi.cached).toBe(false);
    }
    const limited = await ask({ refresh: true });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // Plain queries are still served.
    expect((await ask({})).json.widgets.revenue_kpi.cached).toBe(true);
  });
  it("treats prototype names in widget ids and filters as ordinary data", async () => {
    const { json } = await create("proto-ids");
    const res = await call(query.POST, "POST", {
      token: admin,
      params: { id: json.id },
      rawBody: '{"version": "draft", "widget_ids": ["__proto__", "constructor", "revenue_kpi"], "filters": {"__proto__": {"location": "loc_acme_nyc"}, "constructor": 1}}',
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(200);
    // zod records drop a "__proto__" key; nothing else changes.
    expect(Object.keys(res.json.widgets)).toEqual(["constructor", "revenue_kpi"]);
    expect(res.json.widgets.constructor.error.detail).toBe("No widget 'constructor' in this dashboard");
    const total = await sqlValue("SELECT sum(amount) AS v FROM orders WHERE org_id = 'org_acme'");
    expect(Number(res.json.widgets.revenue_kpi.rows[0].revenue)).toBeCloseTo(total, 2);
  });
  it("stops existing embed links when a newly published version turns allow_embed off", async () => {
    const { json } = await create("embed-off");
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    const grant = await call(embed.POST, "POST", { token: admin, params: { id: json.id } });
    expect((await call(embedQuery.POST, "POST", { body: { token: grant.json.token } })).status).toBe(200);
    await call(one.PUT, "PUT", { token: admin, params: { id: json.id }, body: { spec_yaml: SMALL.replace("allow_embed: true", "allow_embed: false") } });
    // Editing the draft alone changes nothing...
    expect((await call(embedQuery.POST, "POST", { body: { token: grant.json.token } })).status).toBe(200);
    await call(publish.POST, "POST", { token: admin, params: { id: json.id } });
    // ...publishing it does.
    const off = await call(embedQuery.POST, "POST", { body: { token: grant.json.token } });
    expect(off.status).toBe(403);
    expect(off.json.detail).toMatch(/Embedding has been turned off/);
  });
});
