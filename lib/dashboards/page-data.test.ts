import fs from "node:fs";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as embed from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import { principalFromBearer } from "@/lib/auth/bearer";
import type { Principal } from "@/lib/access/roles";
import { call, tokenFor } from "@/test/helpers";
import { loadEmbed, loadPublic } from "./embed-page";
import { getDashboardRollups } from "./dashboard-rollups";
import { loadDashboard } from "./page-data";
import { getDb } from "@/lib/db/client";
import { filterSummaries } from "./filter-values";
import { kpiFigure } from "./widget-figures";
import { orgView, viewColumnFormats } from "./wiring";

/*
 * The access policy is asked once per page: each loader grants, then runs its first query on that
 * grant, and reads the organization (its time zone) once. The policy's and the directory's own
 * functions are wrapped to count calls; they still run (nothing is faked).
 */
const calls = vi.hoisted(() => ({ grants: [] as string[], organizations: 0 }));

vi.mock("./policy", async (importOriginal) => {
  const policy = await importOriginal<typeof import("./policy")>();
  return {
    ...policy,
    grantForPrincipal: (principal: Principal, idOrSlug: string, wanted: Parameters<typeof policy.grantForPrincipal>[2]) => {
      calls.grants.push(idOrSlug);
      return policy.grantForPrincipal(principal, idOrSlug, wanted);
    },
    grantForEmbed: (grant: Parameters<typeof policy.grantForEmbed>[0]) => {
      calls.grants.push(grant.dashboardId);
      return policy.grantForEmbed(grant);
    },
    grantForPublic: (orgSlug: string, slug: string) => {
      calls.grants.push(slug);
      return policy.grantForPublic(orgSlug, slug);
    },
  };
});

vi.mock("@/lib/auth/directory", async (importOriginal) => {
  const directory = await importOriginal<typeof import("@/lib/auth/directory")>();
  return {
    ...directory,
    findOrganization: (slugOrId: string) => {
      calls.organizations++;
      return directory.findOrganization(slugOrId);
    },
  };
});

const SMALL = fs.readFileSync(path.join(import.meta.dirname, "fixtures/small-dashboard.yaml"), "utf8");
let admin: string, analyst: string, globex: string, gm: string, embedToken: string, dashboardId: string;

beforeAll(async () => {
  [admin, analyst, globex, gm] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin"), tokenFor("acme", "general_manager")]);
  const made = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "Once", slug: "once", spec_yaml: SMALL.replace("public: false", "public: true") } });
  expect(made.status).toBe(201);
  dashboardId = made.json.id;
  expect((await call(publish.POST, "POST", { token: admin, params: { id: dashboardId } })).status).toBe(200);
  const embedded = await call(embed.POST, "POST", { token: gm, params: { id: dashboardId }, body: {} });
  expect(embedded.status).toBe(201);
  embedToken = embedded.json.token;
});

beforeEach(() => {
  calls.grants = [];
  calls.organizations = 0;
});

describe("a page asks the policy once", () => {
  it("the viewer page (published) and the editor page (draft, with its YAML)", async () => {
    const principal = await principalFromBearer(analyst);
    calls.organizations = 0;
    const viewer = await loadDashboard(principal, "once", {});
    expect(viewer?.ok && Object.keys(viewer.results)).toContain("revenue_kpi");
    expect(calls).toEqual({ grants: ["once"], organizations: 1 });

    const editor = await principalFromBearer(admin);
    calls.grants = [];
    calls.organizations = 0;
    const draft = await loadDashboard(editor, "once", { version: "draft" }, { includeYaml: true });
    expect(draft?.ok && draft.version).toBe("draft");
    expect(draft?.record?.spec_yaml).toContain("small-sales");
    expect(calls).toEqual({ grants: ["once"], organizations: 1 });
  });

  it("the editor page's rollup table, read on the same grant, is what the rollups endpoint answers; a viewer gets none", async () => {
    const sample = fs.readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "manifests", "sample-dashboard.yaml"), "utf8").replace("sample-sales", "once-rollups");
    expect((await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "Rollups", slug: "once-rollups", spec_yaml: sample } })).status).toBe(201);
    const editor = await principalFromBearer(admin);
    calls.grants = [];
    calls.organizations = 0;
    const draft = await loadDashboard(editor, "once-rollups", { version: "draft" }, { includeYaml: true, includeRollups: true });
    expect(calls).toEqual({ grants: ["once-rollups"], organizations: 1 });
    expect(draft?.ok && draft.rollups?.rollups.map((r) => [r.name, r.state])).toEqual([
      ["sales_by_location_day", "not_built"],
      ["sales_by_channel_category_day", "not_built"],
      ["orders_by_day", "not_built"],
    ]);
    expect(draft?.ok && draft.rollups).toEqual(await getDashboardRollups(editor, "once-rollups"));
    // The embed and schedule dialogs offer the page's filters by their options' labels: locations by name, not id.
    if (!draft?.ok) throw new Error("the draft did not load");
    const [date, locations] = filterSummaries(draft.view.widgets, draft.results);
    expect(date).toMatchObject({ id: "date", control: "date", options: [] });
    expect(locations).toMatchObject({ id: "location_filter", control: "select", multiple: true });
    expect(locations.options).toContainEqual({ value: "loc_acme_nyc", label: "Manhattan Flagship", key: expect.any(String) });
    expect(locations.options.map((o) => o.value)).not.toContain("loc_globex_ber");
    const viewer = await loadDashboard(await principalFromBearer(analyst), "once", {}, { includeRollups: true });
    expect(viewer?.ok && viewer.rollups).toBeNull();
  });

  it("the embed page and the public page", async () => {
    const embedded = await loadEmbed(embedToken, {});
    expect(embedded.ok && Object.keys(embedded.results)).toContain("revenue_kpi");
    expect(calls).toEqual({ grants: [dashboardId], organizations: 1 });

    calls.grants = [];
    calls.organizations = 0;
    const shown = await loadPublic("acme", "once", {});
    expect(shown?.ok && Object.keys(shown.results)).toContain("revenue_kpi");
    // The public link's grant reads the organization by its slug; the page uses that one.
    expect(calls).toEqual({ grants: ["once"], organizations: 1 });
  });

  it("reads money in the organization's currency on the viewer, the embed and the public page, with the organization read once", async () => {
    const { system } = await getDb();
    await system.query("UPDATE organizations SET currency = 'EUR' WHERE id = 'org_acme'");
    try {
      const principal = await principalFromBearer(analyst);
      calls.organizations = 0;
      const viewer = await loadDashboard(principal, "once", {});
      const embedded = await loadEmbed(embedToken, {});
      const shown = await loadPublic("acme", "once", {});
      expect(calls.organizations).toBe(3);
      for (const page of [viewer, embedded, shown]) {
        if (!page?.ok) throw new Error("the page did not load");
        expect(page.view.currency).toBe("EUR");
        const tile = page.view.widgets.find((w) => w.metadata.id === "revenue_kpi")!;
        const result = page.results.revenue_kpi;
        // The tile's own prefix ("$") stands for the symbol; without it the tile reads in euros.
        const bare = { ...tile, spec: { ...tile.spec, display: { ...tile.spec.display, kpi: { format: "currency" as const } } } };
        const text = kpiFigure(orgView({ manifest: page.view.manifest, widgets: [bare] }, page.view.currency!).widgets[0], result.columns, result.rows, viewColumnFormats(page.view, tile)).text;
        expect(text).toMatch(/^€[\d,]+\.\d\d$/);
      }
    } finally {
      await system.query("UPDATE organizations SET currency = 'USD' WHERE id = 'org_acme'");
    }
    const usd = await loadPublic("acme", "once", {});
    expect(usd?.ok && usd.view.currency).toBe("USD");
  });

  it("keeps another organization out: globex neither loads acme's page nor its public link under its own slug", async () => {
    expect(await loadDashboard(await principalFromBearer(globex), "once", {})).toBeNull();
    expect(await loadPublic("globex", "once", {})).toBeNull();
  });
});
