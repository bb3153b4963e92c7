import { beforeAll, describe, expect, it, vi } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as one from "@/app/api/v1/custom-dashboards/[id]/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as embed from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import * as oneEmbed from "@/app/api/v1/custom-dashboards/[id]/embeds/[embed_id]/route";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as embedQuery from "@/app/api/v1/embed/query/route";
import * as publicQuery from "@/app/api/v1/public/query/route";
import { principalFromBearer } from "@/lib/auth/bearer";
import { getDb } from "@/lib/db/client";
import { call, tokenFor } from "@/test/helpers";
import { loadEmbed, loadPublic } from "./embed-page";
import { loadDashboard } from "./page-data";

/**
 * One access policy (policy.ts) for pages, previews, embeds and public links: a general manager
 * limited to two locations embeds and publishes a dashboard, and every way of looking at it
 * shows those two locations only, for dataset and SQL widgets alike.
 */
const TWO = ["loc_acme_nyc", "loc_acme_bos"];
const SQL_TEXT = "select location_id, sum(amount) as revenue from orders where channel <> 'sql-marker-7f3a' group by location_id";

const manifest = (slug: string, options: { public?: boolean } = {}) => `version: "1.0"
kind: dashboard
metadata: { id: ${slug}, name: Scoped ${slug} }
platform: { allow_embed: true, public: ${options.public ?? false} }
spec:
  datasets:
    - id: sales
      from: orders
      dimensions: [{ id: location_id, column: orders.location_id }]
      metrics: [{ id: revenue, type: sql, expression: sum(orders.amount) }]
  tabs: [{ id: main, name: Main, widgets: [by_location, by_sql] }]
---
version: "1.0"
kind: widget
metadata: { id: by_location, name: By location }
spec:
  component: table
  layout: { x: 0, y: 0, w: 6, h: 4 }
  data: { kind: dataset, dataset: sales, columns: [location_id, revenue] }
  display: { table: { page_size: 50 } }
---
version: "1.0"
kind: widget
metadata: { id: by_sql, name: By SQL }
spec:
  component: table
  layout: { x: 6, y: 0, w: 6, h: 4 }
  data: { kind: sql, query: "${SQL_TEXT}" }
  display: { table: { page_size: 50 } }
`;

let scopedGm: string, admin: string, globexAdmin: string;

async function createAndPublish(token: string, slug: string, options: { public?: boolean } = {}) {
  const created = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token, body: { name: slug, slug, spec_yaml: manifest(slug, options) } });
  expect(created.status).toBe(201);
  const published = await call(publish.POST, "POST", `/api/v1/custom-dashboards/${slug}/publish`, { token, params: { id: slug } });
  expect(published.status).toBe(200);
  return created.json.id as string;
}

const locationsOf = (widgets: Record<string, { rows: { location_id: string }[]; error: unknown }>) => ({
  dataset: widgets.by_location.rows.map((r) => r.location_id).sort(),
  sql: widgets.by_sql.rows.map((r) => r.location_id).sort(),
  errors: [widgets.by_location.error, widgets.by_sql.error],
});

beforeAll(async () => {
  [scopedGm, admin, globexAdmin] = await Promise.all([
    tokenFor("acme", "general_manager", { locationIds: TWO }),
    tokenFor("acme", "admin"),
    tokenFor("globex", "admin"),
  ]);
});

describe("embed location scope", () => {
  it("an embed made by a general manager limited to two locations shows only those two, for dataset and SQL widgets", async () => {
    await createAndPublish(scopedGm, "gm-scoped");
    const made = await call(embed.POST, "POST", { token: scopedGm, params: { id: "gm-scoped" }, body: { expires_in: 600 } });
    expect(made.status).toBe(201);
    const { system } = await getDb();
    const [grant] = await system.query<{ location_ids: string[] }>("SELECT location_ids FROM dashboard_embeds WHERE id = $1", [made.json.embed_id]);
    expect(grant.location_ids.sort()).toEqual([...TWO].sort());

    const viaEmbed = await call(embedQuery.POST, "POST", "/api/v1/embed/query", { body: { token: made.json.token, filters: {} } });
    expect(viaEmbed.status).toBe(200);
    expect(locationsOf(viaEmbed.json.widgets)).toEqual({ dataset: [...TWO].sort(), sql: [...TWO].sort(), errors: [null, null] });

    // The admin's own view of the same dashboard shows all five locations: the scope is the creator's, not the dashboard's.
    const asAdmin = await call(query.POST, "POST", { token: admin, params: { id: "gm-scoped" }, body: { filters: {} } });
    expect(locationsOf(asAdmin.json.widgets).dataset).toHaveLength(5);

    // Preview (the signed-in page) resolves the same way, so preview == embed for this manager.
    const preview = await loadDashboard(await principalFromBearer(scopedGm), "gm-scoped", {});
    const page = await loadEmbed(made.json.token, {});
    expect(page.ok).toBe(true);
    if (!page.ok || !preview?.ok) throw new Error("expected both pages");
    expect(locationsOf(page.results as never)).toEqual(locationsOf(preview.results as never));
    expect(locationsOf(page.results as never).sql).toEqual([...TWO].sort());
    // The first test of the file pays for the database's cold start.
  }, 120_000);

  it("sends an anonymous embed page no SQL, no dataset definitions and no raw manifest", async () => {
    await createAndPublish(admin, "no-sql-payload");
    const made = await call(embed.POST, "POST", { token: admin, params: { id: "no-sql-payload" }, body: { expires_in: 600 } });
    const page = await loadEmbed(made.json.token, {});
    if (!page.ok) throw new Error(page.reason);
    const payload = JSON.stringify(page);
    expect(payload).not.toContain("sql-marker-7f3a");
    expect(payload).not.toContain("sum(orders.amount)");
    expect(payload).not.toContain("from orders");
    expect(page.view.manifest.spec.datasets).toEqual([]);
    expect(page.view.widgets.find((w) => w.metadata.id === "by_sql")?.spec.data).toEqual({ kind: "sql" });
    // The data still arrives: render data is all the browser needs.
    expect(locationsOf(page.results as never).sql).toHaveLength(5);
  });

  it("answers the embed query with the token alone: credentials on the request are ignored", async () => {
    await createAndPublish(scopedGm, "ignores-credentials");
    const made = await call(embed.POST, "POST", { token: scopedGm, params: { id: "ignores-credentials" }, body: { expires_in: 600 } });
    // An admin's bearer token (or session cookie) on the request neither widens the scope nor is even read.
    const withAdmin = await call(embedQuery.POST, "POST", "/api/v1/embed/query", { token: admin, body: { token: made.json.token, filters: {} } });
    expect(locationsOf(withAdmin.json.widgets).dataset).toEqual([...TWO].sort());
    const withGarbage = await call(embedQuery.POST, "POST", "/api/v1/embed/query", { headers: { authorization: "Basic x", cookie: "next-auth.session-token=forged" }, body: { token: made.json.token, filters: {} } });
    expect(withGarbage.status).toBe(200);
  });
});

describe("public dashboards (platform.public)", () => {
  it("serves a public dashboard without sign-in under its publisher's scope, with no SQL in the page", async () => {
    await createAndPublish(scopedGm, "public-scoped", { public: true });
    const res = await call(publicQuery.POST, "POST", "/api/v1/public/query", { body: { org: "acme", slug: "public-scoped", filters: {} } });
    expect(res.status).toBe(200);
    expect(locationsOf(res.json.widgets)).toEqual({ dataset: [...TWO].sort(), sql: [...TWO].sort(), errors: [null, null] });
    const page = await loadPublic("acme", "public-scoped", {});
    expect(page?.ok && page.name).toBe("public-scoped");
    expect(JSON.stringify(page)).not.toContain("sql-marker-7f3a");
  });

  it("answers 404 for a dashboard that is not public, not published, of another organization or unknown", async () => {
    await createAndPublish(admin, "private-one");
    await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "d", slug: "draft-public", spec_yaml: manifest("draft-public", { public: true }) } });
    await createAndPublish(globexAdmin, "globex-private");
    await createAndPublish(globexAdmin, "globex-public", { public: true });
    for (const [org, slug] of [["acme", "private-one"], ["acme", "draft-public"], ["globex", "globex-private"], ["acme", "globex-public"], ["org_acme", "public-scoped"], ["nope", "x"]]) {
      const res = await call(publicQuery.POST, "POST", "/api/v1/public/query", { body: { org, slug, filters: {} } });
      expect(res.status, `${org}/${slug}`).toBe(404);
      expect(await loadPublic(org, slug, {})).toBeNull();
    }
    const globexPublic = await call(publicQuery.POST, "POST", "/api/v1/public/query", { body: { org: "globex", slug: "globex-public", filters: {} } });
    expect(globexPublic.status).toBe(200);
    expect(locationsOf(globexPublic.json.widgets).dataset.every((id) => id.startsWith("loc_globex_"))).toBe(true);
  });

  it("is revoked by publishing with public: false", async () => {
    await createAndPublish(admin, "revocable", { public: true });
    const before = await call(publicQuery.POST, "POST", "/api/v1/public/query", { body: { org: "acme", slug: "revocable", filters: {} } });
    expect(before.status).toBe(200);
    await call(one.PUT, "PUT", { token: admin, params: { id: "revocable" }, body: { spec_yaml: manifest("revocable", { public: false }) } });
    // The draft alone changes nothing: viewers see published versions.
    expect((await call(publicQuery.POST, "POST", "/api/v1/public/query", { body: { org: "acme", slug: "revocable", filters: {} } })).status).toBe(200);
    await call(publish.POST, "POST", { token: admin, params: { id: "revocable" } });
    expect((await call(publicQuery.POST, "POST", "/api/v1/public/query", { body: { org: "acme", slug: "revocable", filters: {} } })).status).toBe(404);
  });
});

describe("an embed link that has only expired", () => {
  const PARTNER = "https://partner.example";
  /** Loads the embed page as it will be once the link's ten minutes have passed. */
  async function loadLater(token: string) {
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 11 * 60_000 });
    try {
      return await loadEmbed(token, {});
    } finally {
      vi.useRealTimers();
    }
  }

  it("names its grant and partner origins, so the page asks its framing page for a new token; revoked, partnerless or forged links get the usual refusal", async () => {
    await createAndPublish(admin, "renewable");
    const made = await call(embed.POST, "POST", { token: admin, params: { id: "renewable" }, body: { expires_in: 600, allowed_origins: [PARTNER] } });
    expect(made.status).toBe(201);
    const page = await loadLater(made.json.token);
    expect(page).toEqual({ ok: false, unavailable: false, reason: "This embed link has expired", renewal: { embedId: made.json.embed_id, allowedOrigins: [PARTNER], expiresAt: expect.any(String) } });

    // No partner origin: nobody to ask, so no renewal.
    const alone = await call(embed.POST, "POST", { token: admin, params: { id: "renewable" }, body: { expires_in: 600 } });
    expect(await loadLater(alone.json.token)).toEqual({ ok: false, unavailable: false, reason: "This embed link has expired" });

    // A forged signature on the same claims is not an expired link.
    const [head, body] = made.json.token.split(".");
    expect(await loadLater(`${head}.${body}.${"A".repeat(43)}`)).toEqual({ ok: false, unavailable: false, reason: "This embed link is not valid" });

    // Revoked: the grant is gone for good.
    const revoked = await call(oneEmbed.DELETE, "DELETE", { token: admin, params: { id: "renewable", embed_id: made.json.embed_id } });
    expect(revoked.status).toBeLessThan(300);
    expect(await loadLater(made.json.token)).toEqual({ ok: false, unavailable: false, reason: "This embed link has expired" });
  });
});

describe("manifest guards at the API", () => {
  it("rejects a hostile chart option and 1,000-level nesting with 422 and line:column", async () => {
    const hostile = manifest("hostile").replace("  display: { table: { page_size: 50 } }\n", "  display: { table: { page_size: 50 } }\n").replace(
      "component: table\n  layout: { x: 0",
      "component: echarts\n  layout: { x: 0",
    ).replace("display: { table: { page_size: 50 } }", 'display: { echarts: { option: { tooltip: { formatter: "<img src=x onerror=alert(1)>" }, series: [{ type: bar }] } } }');
    const res = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "h", slug: "hostile", spec_yaml: hostile } });
    expect(res.status).toBe(422);
    expect(res.json.detail).toEqual([expect.objectContaining({ line: 20, msg: expect.stringMatching(/^20:\d+ formatter may not contain HTML/) })]);

    const deep = `version: "1.0"\nkind: dashboard\nmetadata: { id: d, name: D }\nspec: ${"[".repeat(1000)}${"]".repeat(1000)}\n`;
    const nested = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "n", slug: "nested", spec_yaml: deep } });
    expect(nested.status).toBe(422);
    expect(nested.json.detail[0].msg).toMatch(/^4:\d+ the manifest nests deeper than 64 levels/);
  });
});
