import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { NextRequest } from "next/server";
import { beforeAll, describe, expect, it, vi } from "vitest";
import * as embedRoute from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import * as publishRoute from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as dashboardRoute from "@/app/api/v1/custom-dashboards/[id]/route";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as embedExport from "@/app/api/v1/embed/export/route";
import * as embedQuery from "@/app/api/v1/embed/query/route";
import * as publicExport from "@/app/api/v1/public/export/route";
import { seedSampleDashboard } from "@/lib/dashboards/dashboards";
import { kpiFigure } from "@/lib/dashboards/widget-figures";
import { viewColumnFormats, type ViewManifest } from "@/lib/dashboards/wiring";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { call, tokenFor } from "@/test/helpers";
import { reportQueue } from "./limits";

/*
 * Downloads on embed and public pages (issue 29 §2): GET /api/v1/embed/export and /api/v1/public/export render
 * what those pages show — the embed's version, scope and locked filters, the public link's publisher scope —
 * and only in the formats the manifest offers there (platform.downloads).
 */

const SAMPLE = fs.readFileSync(path.join(process.cwd(), "docs/manifests/sample-dashboard.yaml"), "utf8");
const PLATFORM = /^platform:\n(?: {2}.*\n)+/m;
const withPlatform = (platform: string) => SAMPLE.replace(PLATFORM, `platform:\n  roles: [admin, general_manager, analyst]\n  allow_embed: true\n  public: true\n${platform}`);
const OFFERED = withPlatform("  downloads: { pdf: true }\n");
const NOT_OFFERED = withPlatform("");

const parsed = parseDashboardYaml(SAMPLE);
if (!parsed.ok) throw new Error("the sample dashboard does not parse");
const view: ViewManifest = { manifest: parsed.dashboard.manifest, widgets: parsed.dashboard.widgets };
const widget = (id: string) => view.widgets.find((w) => w.metadata.id === id)!;
const KPIS = ["revenue_kpi", "orders_kpi", "margin_kpi", "target_kpi"];
const NAMES = { bos: "Boston Back Bay", nyc: "Manhattan Flagship", others: ["Chicago Loop", "Austin South Congress", "San Francisco"] };

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-anon-report-"));
function pdfText(bytes: Uint8Array): string {
  const file = path.join(tmp, `${Math.random().toString(36).slice(2)}.pdf`);
  fs.writeFileSync(file, bytes);
  return execFileSync("pdftotext", [file, "-"], { encoding: "utf8" }).replace(/\s+/g, " ");
}

/** GET an export with these query parameters (no cookie, no bearer: these endpoints take none); the body as bytes. */
async function get(handler: (req: NextRequest, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>, base: string, query: Record<string, string>) {
  const res = await handler(new NextRequest(new URL(`${base}?${new URLSearchParams(query)}`, "http://localhost:3000")), { params: Promise.resolve({}) });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = Buffer.from(bytes).toString("utf8");
  return { status: res.status, headers: res.headers, pdf: () => pdfText(bytes), json: (text.startsWith("{") ? JSON.parse(text) : undefined) as { detail?: unknown } | undefined };
}
const embedFile = (query: Record<string, string>) => get(embedExport.GET, "/api/v1/embed/export", query);
const publicFile = (query: Record<string, string>) => get(publicExport.GET, "/api/v1/public/export", query);

let admin: string;
const ids = { offered: "", notOffered: "" };
const tokens = { bos: "", locked: "", notOffered: "" };

async function publishedDashboard(slug: string, yaml: string) {
  const created = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: `Downloads ${slug}`, slug, spec_yaml: yaml } });
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  expect((await call(publishRoute.POST, "POST", { token: admin, params: { id: created.json.id } })).status).toBe(200);
  return created.json.id as string;
}

async function embedToken(token: string, id: string, lockedFilters: Record<string, unknown> = {}) {
  const res = await call(embedRoute.POST, "POST", { token, params: { id }, body: { expires_in: 3600, locked_filters: lockedFilters } });
  expect(res.status).toBe(201);
  return res.json.token as string;
}

beforeAll(async () => {
  admin = await tokenFor("acme", "admin");
  // The sample's chart clicks drill through to sample-sales, which saving a copy of it requires to exist.
  await seedSampleDashboard({ userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" });
  ids.offered = await publishedDashboard("downloads-on", OFFERED);
  ids.notOffered = await publishedDashboard("downloads-off", NOT_OFFERED);
  // An embed made by a manager of Boston only: its data is read in that scope.
  tokens.bos = await embedToken(await tokenFor("acme", "general_manager", { locationIds: ["loc_acme_bos"] }), ids.offered);
  tokens.locked = await embedToken(admin, ids.offered, { location_filter: ["loc_acme_nyc"] });
  tokens.notOffered = await embedToken(admin, ids.notOffered);
}, 120_000);

describe("GET /api/v1/embed/export", () => {
  it("answers the PDF the manifest offers, in the embed's scope: its figures are the embed's own query's, no other location named", async () => {
    const res = await embedFile({ token: tokens.bos, format: "pdf", tab: "overview" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="downloads-on-\d{4}-\d{2}-\d{2}\.pdf"$/);
    const text = res.pdf();
    expect(text).toContain("Downloads downloads-on");
    expect(text).toContain(`Scope: Embedded dashboard, location ${NAMES.bos}`);
    const answer = await call(embedQuery.POST, "POST", { body: { token: tokens.bos, widget_ids: KPIS } });
    expect(answer.status).toBe(200);
    const everyone = await call(embedQuery.POST, "POST", { body: { token: tokens.locked, filters: {}, widget_ids: KPIS } });
    for (const id of KPIS) {
      const { columns, rows } = answer.json.widgets[id];
      const figure = kpiFigure(widget(id), columns, rows, viewColumnFormats(view, widget(id)));
      expect(figure.value).not.toBeNull();
      expect(text).toContain(figure.text);
      // The check can fail: another scope's figure is another one.
      expect(figure.text).not.toBe(kpiFigure(widget(id), everyone.json.widgets[id].columns, everyone.json.widgets[id].rows, viewColumnFormats(view, widget(id))).text);
    }
    for (const name of [NAMES.nyc, ...NAMES.others]) expect(text).not.toContain(name);
  });

  it("applies the embed's locked filters over the page's values, and says so in the header", async () => {
    const res = await embedFile({ token: tokens.locked, format: "pdf", tab: "overview", "f.location_filter": JSON.stringify(["loc_acme_chi"]) });
    expect(res.status).toBe(200);
    const text = res.pdf();
    expect(text).toContain(`Locations: ${NAMES.nyc}`);
    expect(text).not.toContain("Chicago Loop");
    const answer = await call(embedQuery.POST, "POST", { body: { token: tokens.locked, filters: { location_filter: ["loc_acme_chi"] }, widget_ids: ["revenue_kpi"] } });
    const { columns, rows } = answer.json.widgets.revenue_kpi;
    expect(text).toContain(kpiFigure(widget("revenue_kpi"), columns, rows, viewColumnFormats(view, widget("revenue_kpi"))).text);
  });

  it("refuses a format the manifest does not offer (403), a bad token (401) and a bad parameter (422), each with a detail", async () => {
    const png = await embedFile({ token: tokens.bos, format: "png" });
    expect(png.status).toBe(403);
    expect(png.json?.detail).toMatch(/platform\.downloads\.png/);
    const none = await embedFile({ token: tokens.notOffered, format: "pdf" });
    expect(none.status).toBe(403);
    expect(none.json?.detail).toMatch(/platform\.downloads\.pdf/);
    const bad = await embedFile({ token: `${tokens.bos.slice(0, -4)}AAAA`, format: "pdf" });
    expect(bad.status).toBe(401);
    expect(bad.json).toEqual({ detail: "This embed link is not valid" });
    expect((await embedFile({ token: tokens.bos, format: "docx" })).status).toBe(422);
  });

  it("renders in the organization's render line, one at a time, like the signed-in export", async () => {
    // The organization's line is busy with another render: the embed's waits behind it, and runs once it is done.
    let release = () => {};
    const busy = reportQueue.get().run("org_acme", () => new Promise<void>((resolve) => (release = resolve)));
    const waiting = embedFile({ token: tokens.bos, format: "pdf", tab: "overview" });
    await vi.waitFor(() => expect(reportQueue.get().snapshot().lines.org_acme).toEqual({ running: 1, waiting: 1 }), { timeout: 20_000 });
    release();
    await busy;
    expect((await waiting).status).toBe(200);
  });
});

describe("GET /api/v1/public/export", () => {
  it("answers the offered PDF of a public dashboard, and 403 for a format it does not offer", async () => {
    const res = await publicFile({ org: "acme", slug: "downloads-on", format: "pdf", tab: "overview" });
    expect(res.status).toBe(200);
    const text = res.pdf();
    expect(text).toContain("Downloads downloads-on");
    expect(text).toContain("Scope: Public dashboard, all locations of");
    const png = await publicFile({ org: "acme", slug: "downloads-on", format: "png" });
    expect(png.status).toBe(403);
    expect(png.json?.detail).toMatch(/platform\.downloads\.png/);
    expect((await publicFile({ org: "acme", slug: "downloads-off", format: "pdf" })).status).toBe(403);
  });

  it("answers 404 for another organization's dashboard and for one that is not public", async () => {
    const other = await publicFile({ org: "globex", slug: "downloads-on", format: "pdf" });
    expect(other.status).toBe(404);
    expect(other.json).toEqual({ detail: "Dashboard not found" });
    // The sample is not public (platform.public is false), whatever it offers.
    const created = await call(list.POST, "POST", "/api/v1/custom-dashboards", {
      token: admin,
      body: { name: "Private downloads", slug: "downloads-private", spec_yaml: OFFERED.replace("  public: true\n", "  public: false\n") },
    });
    expect((await call(publishRoute.POST, "POST", { token: admin, params: { id: created.json.id } })).status).toBe(200);
    expect((await publicFile({ org: "acme", slug: "downloads-private", format: "pdf" })).status).toBe(404);
  });
});

describe("turning downloads off", () => {
  it("publishing a version without them stops the downloads of embeds made for an older version", async () => {
    const saved = await call(dashboardRoute.PUT, "PUT", { token: admin, params: { id: ids.offered }, body: { spec_yaml: NOT_OFFERED } });
    expect(saved.status).toBe(200);
    expect((await call(publishRoute.POST, "POST", { token: admin, params: { id: ids.offered } })).status).toBe(200);
    const res = await embedFile({ token: tokens.bos, format: "pdf" });
    expect(res.status).toBe(403);
    expect(res.json?.detail).toMatch(/platform\.downloads\.pdf/);
  });
});
