import { beforeAll, describe, expect, it } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as embed from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as embedQuery from "@/app/api/v1/embed/query/route";
import * as publicQuery from "@/app/api/v1/public/query/route";
import { principalFromBearer } from "@/lib/auth/bearer";
import { loadEmbed, loadPublic } from "@/lib/dashboards/embed-page";
import { loadDashboard } from "@/lib/dashboards/page-data";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { call, tokenFor } from "@/test/helpers";

// Issue 26 §7: `platform.public: true` overrode `platform.roles`, and a widget placed in no tab was
// still served to anonymous callers. Now a public manifest must list every role, and a parked
// widget (in no tab and no band of a dashboard with tabs) is served nowhere.

const MARKER = "parked-marker-5c1e";
const manifest = (slug: string, platform = "{ roles: [admin, general_manager, analyst], allow_embed: true, public: true }") => `version: "1.0"
kind: dashboard
metadata: { id: ${slug}, name: ${slug} }
platform: ${platform}
spec:
  datasets:
    - id: sales
      from: orders
      dimensions: [{ id: channel, column: orders.channel }]
      metrics: [{ id: revenue, type: sql, expression: sum(orders.amount) }]
  tabs: [{ id: main, name: Main, widgets: [by_channel] }]
---
version: "1.0"
kind: widget
metadata: { id: by_channel, name: By channel }
spec:
  component: table
  layout: { x: 0, y: 0, w: 6, h: 4 }
  data: { kind: dataset, dataset: sales, columns: [channel, revenue] }
---
version: "1.0"
kind: widget
metadata: { id: parked_sql, name: Parked }
spec:
  component: table
  layout: { x: 6, y: 0, w: 6, h: 4 }
  data: { kind: sql, query: "select channel, count(*) as n from orders where channel <> '${MARKER}' group by channel" }
---
version: "1.0"
kind: widget
metadata: { id: parked_filter, name: Parked filter }
spec:
  component: filter
  layout: { x: 0, y: 4, w: 3, h: 1 }
  display: { filter: { control: select, options: [store], default: store } }
  bindings: [{ target: "*", field: channel, operator: eq }]
`;

describe("platform.public needs every role (issue 26 §7)", () => {
  it("refuses public: true with roles that leave a role out, at platform.public with line and column", () => {
    const text = manifest("p", "\n  roles: [admin, general_manager]\n  public: true");
    const parsed = parseDashboardYaml(text);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.errors).toHaveLength(1);
    expect(parsed.errors[0]).toMatchObject({ path: ["platform", "public"], line: 6, column: 11 });
    expect(parsed.errors[0].message).toMatch(/public: true shows the dashboard to anyone with its link, which platform.roles \(admin, general_manager\) would not allow for analyst/);
  });

  it("accepts public: true with every role or roles omitted, and any roles when not public", () => {
    for (const platform of ["{ public: true }", "{ roles: [analyst, admin, general_manager], public: true }", "{ roles: [admin], public: false }", "{ roles: [admin] }"]) {
      expect(parseDashboardYaml(manifest("p", platform)).ok, platform).toBe(true);
    }
  });

  it("answers 422 with the position when such a manifest is saved", async () => {
    const admin = await tokenFor("acme", "admin");
    const res = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "p", slug: "public-admins", spec_yaml: manifest("p", "{ roles: [admin], public: true }") } });
    expect(res.status).toBe(422);
    expect(res.json.detail).toEqual([expect.objectContaining({ loc: expect.arrayContaining(["platform", "public"]), line: 4, column: 37 })]);
  });
});

describe("widgets placed in no tab are never served (issue 26 §7)", () => {
  let admin: string;
  let analyst: string;
  let embedToken: string;
  beforeAll(async () => {
    [admin, analyst] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst")]);
    expect((await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "parked", slug: "parked", spec_yaml: manifest("parked") } })).status).toBe(201);
    expect((await call(publish.POST, "POST", { token: admin, params: { id: "parked" } })).status).toBe(200);
    const made = await call(embed.POST, "POST", { token: admin, params: { id: "parked" }, body: {} });
    expect(made.status).toBe(201);
    embedToken = made.json.token;
  });

  const channelsOf = (widgets: Record<string, { rows: { channel: string }[] }>) => widgets.by_channel.rows.map((r) => r.channel).sort();

  it("answers a parked widget's id as an unknown one on every query, and leaves it out when no ids are named", async () => {
    const asked = { filters: {}, widget_ids: ["by_channel", "parked_sql", "parked_filter"] };
    const answers = [
      await call(query.POST, "POST", { token: analyst, params: { id: "parked" }, body: asked }),
      await call(query.POST, "POST", { token: admin, params: { id: "parked" }, body: { ...asked, version: "draft" } }),
      await call(publicQuery.POST, "POST", "/api/v1/public/query", { body: { org: "acme", slug: "parked", ...asked } }),
      await call(embedQuery.POST, "POST", "/api/v1/embed/query", { body: { token: embedToken, ...asked } }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.json.widgets.parked_sql).toMatchObject({ rows: [], error: { detail: "No widget 'parked_sql' in this dashboard" } });
      expect(res.json.widgets.parked_filter).toMatchObject({ rows: [], error: { detail: "No widget 'parked_filter' in this dashboard" } });
      // The parked filter (default: store, bound to every widget) filters nothing.
      expect(channelsOf(res.json.widgets).length).toBeGreaterThan(1);
    }
    const unnamed = await call(publicQuery.POST, "POST", "/api/v1/public/query", { body: { org: "acme", slug: "parked" } });
    expect(Object.keys(unnamed.json.widgets)).toEqual(["by_channel"]);
  });

  it("sends no parked widget to any page: signed-in, embed and public", async () => {
    const signedIn = await loadDashboard(await principalFromBearer(analyst), "parked", {});
    const embedded = await loadEmbed(embedToken, {});
    const publicPage = await loadPublic("acme", "parked", {});
    if (!signedIn?.ok || !embedded.ok || !publicPage?.ok) throw new Error("expected three pages");
    for (const page of [signedIn, embedded, publicPage]) {
      expect(page.view.widgets.map((w) => w.metadata.id)).toEqual(["by_channel"]);
      expect(Object.keys(page.results)).toEqual(["by_channel"]);
      expect(JSON.stringify(page)).not.toContain(MARKER);
      expect(JSON.stringify(page)).not.toContain("parked_");
    }
  });
});
