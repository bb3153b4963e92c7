import { beforeAll, describe, expect, it } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as one from "@/app/api/v1/custom-dashboards/[id]/route";
import * as embed from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as embedQuery from "@/app/api/v1/embed/query/route";
import * as publicQuery from "@/app/api/v1/public/query/route";
import { principalFromBearer } from "@/lib/auth/bearer";
import { getDb } from "@/lib/db/client";
import { loadEmbed, loadPublic } from "@/lib/dashboards/embed-page";
import { loadDashboard } from "@/lib/dashboards/page-data";
import { UNAVAILABLE_TO_ANONYMOUS, UNPASSABLE_TO_VIEWERS } from "@/lib/dashboards/policy";
import { call, tokenFor } from "@/test/helpers";

// Validation rules were tightened (user SQL on an allow-list, filter defaults, public needs every
// role), so a manifest stored before may no longer validate. Pages and queries must not answer 500:
// editors see the problems and can open the editor to fix them; analysts, embeds and public links
// learn only that the dashboard cannot be shown, never the SQL the problems name.

const MARKER = "unpassable-marker-91d2";
const GOOD_SQL = `select channel, count(*) as n from orders where channel <> '${MARKER}' group by channel`;
// repeat() is not on the allow-list: written straight into the database, as if saved before the rule.
const BAD_SQL = `select channel, repeat('x', 3) as n from orders where channel <> '${MARKER}' group by channel`;

const manifest = (slug: string, roles: string, sql = GOOD_SQL) => `version: "1.0"
kind: dashboard
metadata: { id: ${slug}, name: ${slug} }
platform: { roles: ${roles}, allow_embed: true, public: ${roles.includes("analyst")} }
spec:
  tabs: [{ id: main, name: Main, widgets: [by_channel] }]
---
version: "1.0"
kind: widget
metadata: { id: by_channel, name: By channel }
spec:
  component: table
  layout: { x: 0, y: 0, w: 6, h: 4 }
  data: { kind: sql, query: "${sql}" }
`;

/** Makes the stored draft and every published version of a dashboard fail the allow-list, behind the API's back. */
async function breakStoredManifests(slug: string) {
  const { system } = await getDb();
  const [{ id }] = await system.query<{ id: string }>("SELECT id FROM dashboards WHERE org_id = 'org_acme' AND slug = $1", [slug]);
  await system.query("UPDATE dashboard_versions SET spec_yaml = replace(spec_yaml, $2, $3) WHERE dashboard_id = $1", [id, GOOD_SQL, BAD_SQL]);
  await system.query("UPDATE dashboards SET draft_yaml = replace(draft_yaml, $2, $3) WHERE id = $1", [id, GOOD_SQL, BAD_SQL]);
  const rows = await system.query<{ n: number }>("SELECT count(*)::int AS n FROM dashboard_versions WHERE dashboard_id = $1 AND spec_yaml LIKE '%repeat(%'", [id]);
  expect(rows[0].n).toBeGreaterThan(0);
}

const leaksSql = (value: unknown) => {
  const text = JSON.stringify(value);
  return text.includes(MARKER) || text.includes("repeat") || text.includes("orders");
};

describe("a stored manifest that no longer validates", () => {
  let admin: string;
  let analyst: string;
  let embedToken: string;
  beforeAll(async () => {
    [admin, analyst] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst")]);
    for (const [slug, roles] of [
      ["unpassable", "[admin, general_manager, analyst]"],
      ["unpassable-private", "[admin, general_manager]"],
    ]) {
      expect((await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: slug, slug, spec_yaml: manifest(slug, roles) } })).status).toBe(201);
      expect((await call(publish.POST, "POST", { token: admin, params: { id: slug } })).status).toBe(200);
    }
    const made = await call(embed.POST, "POST", { token: admin, params: { id: "unpassable" }, body: {} });
    expect(made.status).toBe(201);
    embedToken = made.json.token;
    // It loads before the rules "changed".
    expect((await loadDashboard(await principalFromBearer(analyst), "unpassable", {}))?.ok).toBe(true);
    await breakStoredManifests("unpassable");
    await breakStoredManifests("unpassable-private");
  });

  it("loads for an editor as the problems with line and column, published version and draft", async () => {
    const principal = await principalFromBearer(admin);
    for (const params of [{}, { version: "draft" }]) {
      const page = await loadDashboard(principal, "unpassable", params);
      if (!page || page.ok) throw new Error("expected an unpassable dashboard");
      expect(page.dashboard).toMatchObject({ slug: "unpassable", name: "unpassable" });
      expect(page.version).toBe("version" in params ? "draft" : 1);
      expect(page.errors).toEqual([expect.objectContaining({ line: 14, column: 46, msg: expect.stringMatching(/function repeat\(\) is not allowed/) })]);
    }
  });

  it("loads for an analyst as a refusal without the problems; a role the stored roles leave out still gets not found", async () => {
    const principal = await principalFromBearer(analyst);
    const page = await loadDashboard(principal, "unpassable", {});
    if (!page || page.ok) throw new Error("expected an unpassable dashboard");
    expect(page.errors).toBeNull();
    expect(leaksSql(page)).toBe(false);
    // ?version=draft is ignored for viewers, as for any dashboard.
    expect(await loadDashboard(principal, "unpassable", { version: "draft" })).toMatchObject({ ok: false, version: 1, errors: null });
    expect(await loadDashboard(principal, "unpassable-private", {})).toBeNull();
  });

  it("shows embeds and public links as temporarily unavailable, with nothing of the manifest", async () => {
    const embedded = await loadEmbed(embedToken, {});
    expect(embedded).toEqual({ ok: false, unavailable: true, reason: UNAVAILABLE_TO_ANONYMOUS });
    const publicPage = await loadPublic("acme", "unpassable", {});
    expect(publicPage).toEqual({ ok: false, unavailable: true, reason: UNAVAILABLE_TO_ANONYMOUS });
    // Not public (its stored YAML says public: false): still not found.
    expect(await loadPublic("acme", "unpassable-private", {})).toBeNull();
  });

  it("answers queries: 422 with the problems to editors, 503 with a sentence to everyone else, 404 where the roles say so", async () => {
    const asked = { filters: {}, widget_ids: ["by_channel"] };
    for (const version of ["published", "draft"] as const) {
      const res = await call(query.POST, "POST", { token: admin, params: { id: "unpassable" }, body: { ...asked, version } });
      expect(res.status).toBe(422);
      expect(res.json.detail).toEqual([expect.objectContaining({ line: 14, msg: expect.stringMatching(/repeat/) })]);
    }
    const viewer = await call(query.POST, "POST", { token: analyst, params: { id: "unpassable" }, body: asked });
    expect(viewer.status).toBe(503);
    expect(viewer.json).toEqual({ detail: UNPASSABLE_TO_VIEWERS });
    expect((await call(query.POST, "POST", { token: analyst, params: { id: "unpassable-private" }, body: asked })).status).toBe(404);

    const anonymous = [
      await call(embedQuery.POST, "POST", "/api/v1/embed/query", { body: { token: embedToken, ...asked } }),
      await call(publicQuery.POST, "POST", "/api/v1/public/query", { body: { org: "acme", slug: "unpassable", ...asked } }),
    ];
    for (const res of anonymous) {
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ detail: UNAVAILABLE_TO_ANONYMOUS });
      expect(leaksSql(res.json)).toBe(false);
    }
    expect((await call(publicQuery.POST, "POST", "/api/v1/public/query", { body: { org: "acme", slug: "unpassable-private", ...asked } })).status).toBe(404);
  });

  it("refuses a new embed of the broken version with 409, and keeps the editor's record readable", async () => {
    const made = await call(embed.POST, "POST", { token: admin, params: { id: "unpassable" }, body: {} });
    expect(made.status).toBe(409);
    const record = await call(one.GET, "GET", { token: admin, params: { id: "unpassable" } });
    expect(record.status).toBe(200);
    expect(record.json.spec_yaml).toContain("repeat(");
  });

  it("is fixed by saving a manifest that passes and publishing it", async () => {
    const fixed = manifest("unpassable", "[admin, general_manager, analyst]");
    // The fixed SQL is the one stored before, so the broken dashboard is back to where it started.
    const saved = await call(one.PUT, "PUT", { token: admin, params: { id: "unpassable" }, body: { spec_yaml: fixed } });
    expect(saved.status).toBe(200);
    const draft = await loadDashboard(await principalFromBearer(admin), "unpassable", { version: "draft" });
    expect(draft?.ok).toBe(true);
    // Viewers still see the broken published version until the fix is published.
    expect((await loadDashboard(await principalFromBearer(analyst), "unpassable", {}))?.ok).toBe(false);
    expect((await call(publish.POST, "POST", { token: admin, params: { id: "unpassable" } })).status).toBe(200);
    const page = await loadDashboard(await principalFromBearer(analyst), "unpassable", {});
    if (!page?.ok) throw new Error("expected the fixed dashboard");
    expect(page.results.by_channel.error).toBeNull();
    expect((await loadEmbed(embedToken, {})).ok).toBe(false); // the embed stays bound to version 1, still broken
    expect((await loadPublic("acme", "unpassable", {}))?.ok).toBe(true);
  });
});
