import fs from "node:fs";
import path from "node:path";
import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
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
import { call, tokenFor } from "@/test/helpers";

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
    const published = await call(publish.POST, "POST", "/x", { token: gm, params: { id: created.id } });
    expect(published.status).toBe(200);
    expect(published.json).toMatchObject({ status: "published", published_version: 1, has_unpublished_changes: false });

    const edited = SMALL.replace("name: Small sales", "name: Edited sales");
    const put = await call(one.PUT, "PUT", "/x", { token: admin, params: { id: "immutable" }, body: { spec_yaml: edited } });
    expect(put.json).toMatchObject({ draft_revision: 2, has_unpublished_changes: true, published_version: 1 });

    // Viewers see the published manifest, not the draft.
    const viewer = await call(one.GET, "GET", "/x", { token: analyst, params: { id: "immutable" } });
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
  });

  it("shows analysts only published dashboards whose roles include theirs", async () => {
    await create("draft-only");
    const restricted = SMALL.replace("roles: [admin, general_manager, analyst]", "roles: [admin]");
    const { json } = await create("admins-only", admin, restricted);
    await call(publish.POST, "POST", "/x", { token: admin, params: { id: json.id } });
    const res = await call(list.GET, "GET", "/api/v1/custom-dashboards", { token: analyst });
    const slugs = res.json.items.map((d: { slug: string }) => d.slug);
    expect(slugs).not.toContain("draft-only");
    expect(slugs).not.toContain("admins-only");
    expect((await call(one.GET, "GET", "/x", { token: analyst, params: { id: "admins-only" } })).status).toBe(404);
    expect((await call(publish.POST, "POST", "/x", { token: analyst, params: { id: json.id } })).status).toBe(403);
  });

  it("shows globex nothing of acme's dashboards", async () => {
    const { json } = await create("secret");
    await call(publish.POST, "POST", "/x", { token: admin, params: { id: json.id } });
    expect((await call(one.GET, "GET", "/x", { token: globex, params: { id: json.id } })).status).toBe(404);
    expect((await call(one.GET, "GET", "/x", { token: globex, params: { id: "secret" } })).status).toBe(404);
    expect((await call(query.POST, "POST", "/x", { token: globex, params: { id: json.id }, body: {} })).status).toBe(404);
    expect((await call(embed.POST, "POST", "/x", { token: globex, params: { id: json.id } })).status).toBe(404);
    expect((await call(publish.POST, "POST", "/x", { token: globex, params: { id: json.id } })).status).toBe(404);
    expect((await call(one.DELETE, "DELETE", "/x", { token: globex, params: { id: json.id } })).status).toBe(404);
    const listed = await call(list.GET, "GET", "/api/v1/custom-dashboards", { token: globex });
    expect(listed.json.items.map((d: { id: string }) => d.id)).not.toContain(json.id);
  });

  it("computes widget data that matches hand-written SQL, per filter", async () => {
    const { json } = await create("numbers");
    await call(publish.POST, "POST", "/x", { token: admin, params: { id: json.id } });
    const all = await call(query.POST, "POST", "/x", { token: analyst, params: { id: json.id }, body: {} });
    expect(all.status).toBe(200);
    const total = await sqlValue("SELECT sum(amount) AS v FROM orders WHERE org_id = 'org_acme'");
    expect(all.json.widgets.revenue_kpi.error).toBeNull();
    expect(Number(all.json.widgets.revenue_kpi.rows[0].revenue)).toBeCloseTo(total, 2);

    const nyc = await call(query.POST, "POST", "/x", { token: analyst, params: { id: json.id }, body: { filters: { location: "loc_acme_nyc" } } });
    const nycTotal = await sqlValue("SELECT sum(amount) AS v FROM orders WHERE org_id = 'org_acme' AND location_id = 'loc_acme_nyc'");
    expect(Number(nyc.json.widgets.revenue_kpi.rows[0].revenue)).toBeCloseTo(nycTotal, 2);
    const channelRows = nyc.json.widgets.by_channel.rows as { channel: string; orders_count: number }[];
    const nycOnline = await sqlValue("SELECT count(*) AS v FROM orders WHERE org_id = 'org_acme' AND location_id = 'loc_acme_nyc' AND channel = 'online'");
    expect(Number(channelRows.find((r) => r.channel === "online")?.orders_count)).toBe(nycOnline);

    const month = await call(query.POST, "POST", "/x", {
      token: analyst,
      params: { id: json.id },
      body: { filters: { location: "loc_acme_nyc", period: "2026-03-01 to 2026-03-31" }, widget_ids: ["revenue_kpi"] },
    });
    const monthTotal = await sqlValue("SELECT sum(amount) AS v FROM orders WHERE org_id = 'org_acme' AND location_id = 'loc_acme_nyc' AND order_date >= '2026-03-01' AND order_date <= '2026-03-31'");
    expect(Object.keys(month.json.widgets)).toEqual(["revenue_kpi"]);
    expect(Number(month.json.widgets.revenue_kpi.rows[0].revenue)).toBeCloseTo(monthTotal, 2);

    // A location of another organization matches nothing: RLS, not the filter, decides.
    const foreign = await call(query.POST, "POST", "/x", { token: analyst, params: { id: json.id }, body: { filters: { location: "loc_globex_ber" } } });
    expect(foreign.json.widgets.revenue_kpi.rows[0]?.revenue ?? null).toBeNull();
  });

  it("serves unchanged widgets from the cache and recomputes affected ones", async () => {
    const { json } = await create("cached");
    await call(publish.POST, "POST", "/x", { token: admin, params: { id: json.id } });
    const first = await call(query.POST, "POST", "/x", { token: admin, params: { id: json.id }, body: { filters: { period: "2026-01-01" } } });
    expect(first.json.widgets.by_channel.cached).toBe(false);
    // `period` binds only revenue_kpi: the table is not recomputed.
    const second = await call(query.POST, "POST", "/x", { token: admin, params: { id: json.id }, body: { filters: { period: "2026-02-01" } } });
    expect(second.json.widgets.by_channel.cached).toBe(true);
    expect(second.json.widgets.revenue_kpi.cached).toBe(false);
  });

  it("reports one widget's failure without failing the others", async () => {
    const bad = SMALL.replace("expression: count(*)", "expression: count(*) / 0");
    const { json } = await create("one-fails", admin, bad);
    const res = await call(query.POST, "POST", "/x", { token: admin, params: { id: json.id }, body: { version: "draft" } });
    expect(res.status).toBe(200);
    expect(res.json.widgets.by_channel.error.detail).toBeTruthy();
    expect(res.json.widgets.revenue_kpi.error).toBeNull();
  });

  it("refuses to embed unpublished dashboards and issues tokens bound to the version", async () => {
    const { json } = await create("embeddable");
    expect((await call(embed.POST, "POST", "/x", { token: admin, params: { id: json.id } })).status).toBe(409);
    await call(publish.POST, "POST", "/x", { token: admin, params: { id: json.id } });
    const res = await call(embed.POST, "POST", "/x", {
      token: admin,
      params: { id: json.id },
      body: { locked_filters: { location: "loc_acme_bos" }, expires_in: 600, allowed_origins: ["https://partner.example.com/page"] },
    });
    expect(res.status).toBe(201);
    expect(res.json.iframe).toContain(`src="${res.json.url}"`);
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
    expect((await call(embedQuery.POST, "POST", "/x", { body: { token: tampered } })).status).toBe(401);
    const grants = await call(embeds.GET, "GET", "/x", { token: admin, params: { id: json.id } });
    expect(grants.json.items).toHaveLength(1);
    expect((await call(revoke.DELETE, "DELETE", "/x", { token: admin, params: { id: json.id, embed_id: res.json.embed_id } })).status).toBe(204);
    const revoked = await call(embedQuery.POST, "POST", "/x", { body: { token: res.json.token } });
    expect(revoked.status).toBe(401);
    expect(revoked.json.detail).toMatch(/revoked/);
  });

  it("refuses to embed when the manifest does not allow it", async () => {
    const { json } = await create("no-embed", admin, SMALL.replace("allow_embed: true", "allow_embed: false"));
    await call(publish.POST, "POST", "/x", { token: admin, params: { id: json.id } });
    const res = await call(embed.POST, "POST", "/x", { token: admin, params: { id: json.id } });
    expect(res.status).toBe(403);
    expect(res.json.detail).toMatch(/allow_embed/);
  });

  it("seeds the sample dashboard idempotently (admin only)", async () => {
    expect((await call(seed.POST, "POST", "/x", { token: gm })).status).toBe(403);
    const first = await call(seed.POST, "POST", "/x", { token: admin });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ slug: "sample-sales", status: "published", published_version: 1 });
    const again = await call(seed.POST, "POST", "/x", { token: admin });
    expect(again.json).toMatchObject({ id: first.json.id, published_version: 1 });
    const data = await call(query.POST, "POST", "/x", { token: analyst, params: { id: "sample-sales" }, body: {} });
    const failing = Object.entries(data.json.widgets as Record<string, { error: unknown }>).filter(([, w]) => w.error);
    expect(failing).toEqual([]);
  });

  it("deletes a dashboard", async () => {
    const { json } = await create("to-delete");
    expect((await call(one.DELETE, "DELETE", "/x", { token: admin, params: { id: json.id } })).status).toBe(204);
    expect((await call(one.GET, "GET", "/x", { token: admin, params: { id: json.id } })).status).toBe(404);
  });
});
