import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { NextRequest } from "next/server";
import { beforeAll, describe, expect, it } from "vitest";
import * as exportRoute from "@/app/api/v1/custom-dashboards/[id]/export/route";
import * as queryRoute from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as list from "@/app/api/v1/custom-dashboards/route";
import type { Principal } from "@/lib/access/roles";
import { seedSampleDashboard } from "@/lib/dashboards/dashboards";
import { kpiFigure, tableCells } from "@/lib/dashboards/widget-figures";
import { viewColumnFormats, type ViewManifest } from "@/lib/dashboards/wiring";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { call, tokenFor } from "@/test/helpers";
import { greyVariance, pngGreys } from "@/test/support/png";
import { layoutReport } from "./layout";
import { writePdf } from "./pdf";
import { writePng } from "./png";
import { renderDashboardReport } from "./render";
import { reportQueue } from "./limits";

/*
 * Fidelity of the reports (issue 29 §5), through GET /api/v1/custom-dashboards/{id}/export: the
 * text poppler's pdftotext reads from the PDF holds what the viewer shows, formatted as the viewer
 * formats it, for exactly the caller's scope.
 */

const SAMPLE = fs.readFileSync(path.join(process.cwd(), "docs/manifests/sample-dashboard.yaml"), "utf8");
const SMALL = fs.readFileSync(path.join(process.cwd(), "lib/dashboards/fixtures/small-dashboard.yaml"), "utf8");
const parsed = parseDashboardYaml(SAMPLE);
if (!parsed.ok) throw new Error("the sample dashboard does not parse");
const view: ViewManifest = { manifest: parsed.dashboard.manifest, widgets: parsed.dashboard.widgets };
const widget = (id: string) => view.widgets.find((w) => w.metadata.id === id)!;

const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };
const SCOPE = ["loc_acme_nyc", "loc_acme_bos"];
const OTHER_NAMES = ["Chicago Loop", "Austin South Congress", "San Francisco"];
let dashboardId: string;
let adminToken: string;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-report-"));
function pdfText(bytes: Uint8Array, pages?: { first: number; last: number }): string {
  const file = path.join(tmp, `${Math.random().toString(36).slice(2)}.pdf`);
  fs.writeFileSync(file, bytes);
  return execFileSync("pdftotext", [...(pages ? ["-f", String(pages.first), "-l", String(pages.last)] : []), file, "-"], { encoding: "utf8" });
}

async function download(token: string, id: string, search = "") {
  const req = new NextRequest(new URL(`/api/v1/custom-dashboards/${encodeURIComponent(id)}/export${search}`, "http://localhost:3000"), { headers: { authorization: `Bearer ${token}` } });
  const res = await exportRoute.GET(req, { params: Promise.resolve({ id }) });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, type: res.headers.get("content-type"), headers: res.headers, bytes, json: () => JSON.parse(Buffer.from(bytes).toString("utf8")) };
}

/** What …/query answers the same caller, for the same widgets. */
async function queried(token: string, widgetIds: string[]) {
  const res = await call(queryRoute.POST, "POST", { token, params: { id: dashboardId }, body: { widget_ids: widgetIds } });
  expect(res.status).toBe(200);
  return res.json.widgets as Record<string, { columns: string[]; rows: Record<string, unknown>[] }>;
}

const KPIS = ["revenue_kpi", "orders_kpi", "margin_kpi", "target_kpi"];

beforeAll(async () => {
  dashboardId = (await seedSampleDashboard(admin)).id;
  adminToken = await tokenFor("acme", "admin");
}, 120_000);

describe("GET /api/v1/custom-dashboards/{id}/export", () => {
  it("a PDF holds the title, the header, every KPI as the viewer formats it, chart titles and axis labels", async () => {
    const res = await download(adminToken, dashboardId, "?tab=overview");
    expect(res.status).toBe(200);
    expect(res.type).toBe("application/pdf");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="sample-sales-\d{4}-\d{2}-\d{2}\.pdf"$/);
    const text = pdfText(res.bytes);
    expect(text).toContain("Sales overview");
    expect(text).toMatch(/Snapshot: \w{3} \d+, \d{4}, \d+:\d{2} [AP]M \(America\/New_York\)/);
    expect(text).toMatch(/Filters: Order date: last month \(.+\) · Locations: all/);
    expect(text).toContain("Scope: Admin, all locations of Acme");
    const results = await queried(adminToken, KPIS);
    for (const id of KPIS) {
      const figure = kpiFigure(widget(id), results[id].columns, results[id].rows, viewColumnFormats(view, widget(id)));
      expect(figure.value).not.toBeNull();
      expect(text).toContain(figure.text);
      if (figure.delta) expect(text).toContain(figure.delta.text);
    }
    for (const title of ["Revenue by day", "Revenue by location", "Channel mix", "Margin"]) expect(text).toContain(title);
    // Axis and legend labels drawn by ECharts, as text in the PDF: the channels, and compact figures on a value axis.
    for (const label of ["online", "partner", "store"]) expect(text).toContain(label);
    expect(text).toMatch(/\b\d+K\b/);
  });

  it("the first page of a tab holds its table's cells, formatted as the viewer's table", async () => {
    const res = await download(adminToken, dashboardId, "?tab=analysis");
    expect(res.status).toBe(200);
    const first = pdfText(res.bytes, { first: 1, last: 1 });
    const { location_table: table } = await queried(adminToken, ["location_table"]);
    expect(table.rows.length).toBeGreaterThan(2);
    const cells = tableCells(table.columns, table.rows, viewColumnFormats(view, widget("location_table")));
    for (const row of table.rows) for (const column of ["revenue", "orders", "margin_pct"]) expect(first).toContain(cells.cell(column, row[column]));
    expect(first).toContain("Margin pct");
    // The tab's logo, an SVG of this site's own (public/quarry-logo.svg), drawn as vectors: its text is text.
    expect(pdfText(res.bytes)).toMatch(/Logo[\s\S]*Quarry/);
  });

  it("a manager scoped to two locations gets the figures …/query gives that manager, and no other location's name", async () => {
    const token = await tokenFor("acme", "general_manager", { locationIds: SCOPE });
    const res = await download(token, dashboardId);
    expect(res.status).toBe(200);
    const text = pdfText(res.bytes).replace(/\s+/g, " ");
    expect(text).toContain("Scope: General manager, locations Boston Back Bay, Manhattan Flagship");
    const mine = await queried(token, KPIS);
    const everyone = await queried(adminToken, KPIS);
    for (const id of KPIS) {
      const figure = kpiFigure(widget(id), mine[id].columns, mine[id].rows, viewColumnFormats(view, widget(id)));
      expect(text).toContain(figure.text);
      // The check can fail: the organization's figure is another one.
      expect(figure.text).not.toBe(kpiFigure(widget(id), everyone[id].columns, everyone[id].rows, viewColumnFormats(view, widget(id))).text);
    }
    for (const name of OTHER_NAMES) expect(text).not.toContain(name);
    // Same render as the admin names them (the check can fail).
    const all = pdfText((await download(adminToken, dashboardId)).bytes);
    for (const name of OTHER_NAMES) expect(all.replace(/\s+/g, " ")).toContain(name);
  });

  it("a PNG of a tab is an image with something drawn on it, at the width asked for", async () => {
    const res = await download(adminToken, dashboardId, "?format=png&tab=overview&width=900");
    expect(res.status).toBe(200);
    expect(res.type).toBe("image/png");
    const image = pngGreys(res.bytes);
    expect(image.width).toBe(900);
    expect(image.height).toBeGreaterThan(400);
    expect(greyVariance(image)).toBeGreaterThan(100);
  });

  it("a CJK title survives in the PDF and the PNG", async () => {
    const created = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: adminToken, body: { name: "销售概览 東京 Small", slug: "cjk-report", spec_yaml: SMALL } });
    expect(created.status).toBe(201);
    const pdf = await download(adminToken, created.json.id, "?version=draft");
    expect(pdf.status).toBe(200);
    expect(pdfText(pdf.bytes)).toContain("销售概览 東京 Small");
    const png = await download(adminToken, created.json.id, "?version=draft&format=png");
    expect(greyVariance(pngGreys(png.bytes))).toBeGreaterThan(50);
  });

  it("answers another organization 404, and a bad format or an unknown tab 422", async () => {
    const globex = await tokenFor("globex", "admin");
    const res = await download(globex, dashboardId);
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({ detail: "Dashboard not found" });
    expect((await download(globex, "sales-overview")).status).toBe(404);
    expect((await download(adminToken, dashboardId, "?format=docx")).status).toBe(422);
    const tab = await download(adminToken, dashboardId, "?tab=nope");
    expect(tab.status).toBe(422);
    expect(JSON.stringify(tab.json().detail)).toContain("No tab 'nope'");
  });

  it("filters passed as f.<id> parameters are applied and shown in the header", async () => {
    const res = await download(adminToken, dashboardId, `?tab=overview&f.location_filter=${encodeURIComponent(JSON.stringify(["loc_acme_bos"]))}&f.date=2026-03-01%20to%202026-03-31`);
    expect(res.status).toBe(200);
    const text = pdfText(res.bytes).replace(/\s+/g, " ");
    expect(text).toContain("Locations: Boston Back Bay");
    expect(text).toContain("Order date: 2026-03-01 to 2026-03-31");
  });
});

describe("limits", () => {
  it("cuts at the page and row limits and says so in the report", async () => {
    const report = await renderDashboardReport(admin, { dashboardId, filters: {}, format: "pdf", tab: "analysis" }, { maxPages: 1, maxTableRows: 5, renderMs: 30_000, maxPngHeight: 12_000 });
    expect(report.pages).toBe(1);
    expect(report.cut).toEqual(expect.arrayContaining([expect.stringMatching(/^Orders: First 5 of 1,000 rows\.$/), expect.stringMatching(/^Page limit reached/)]));
    const text = pdfText(report.bytes).replace(/\s+/g, " ");
    expect(text).toContain("Left out: Orders: First 5 of 1,000 rows.");
    expect(text).toContain("Page limit reached");
  });

  it("renders one report of an organization at a time; a second waits in that organization's line", async () => {
    const first = renderDashboardReport(admin, { dashboardId, filters: {}, format: "png" });
    const second = renderDashboardReport(admin, { dashboardId, filters: {}, format: "png" });
    expect(reportQueue.get().snapshot().lines.org_acme).toEqual({ running: 1, waiting: 1 });
    await Promise.all([first, second]);
    expect(reportQueue.get().snapshot().lines.org_acme).toBeUndefined();
  });
});

describe("fonts", () => {
  it("draws text with the shipped fonts when the host has none, and embeds them in the PDF", async () => {
    const empty = path.join(tmp, "fonts.conf");
    fs.writeFileSync(empty, '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig></fontconfig>');
    const saved = process.env.FONTCONFIG_FILE;
    process.env.FONTCONFIG_FILE = empty;
    try {
      const model = { title: "Quarterly revenue 季度收入", lines: [], sections: [] };
      const { pages } = layoutReport(model, { width: 600, height: null, margin: 20 }, { maxPages: 1, deadline: Number.POSITIVE_INFINITY });
      const image = pngGreys(writePng(pages[0]));
      // The title line, and a blank stretch below it (the check can fail).
      expect(greyVariance(image, { x: 0, y: 20, w: 600, h: 26 })).toBeGreaterThan(200);
      expect(greyVariance(image, { x: 0, y: 60, w: 600, h: 10 })).toBe(0);
      const pdf = await writePdf(layoutReport(model, { width: 600, height: 400, margin: 20 }, { maxPages: 1, deadline: Number.POSITIVE_INFINITY }).pages, { title: "t", author: "a" });
      expect(pdfText(pdf)).toContain("Quarterly revenue 季度收入");
      const file = path.join(tmp, "fonts.pdf");
      fs.writeFileSync(file, pdf);
      const fonts = execFileSync("pdffonts", [file], { encoding: "utf8" }).split("\n").slice(2).filter(Boolean);
      expect(fonts.length).toBeGreaterThan(0);
      for (const line of fonts) {
        expect(line).not.toMatch(/Helvetica/);
        // name, type, encoding, emb, sub, uni, object, generation: every font embedded.
        expect(line.split(/\s+/).slice(-5)[0]).toBe("yes");
      }
      expect(fonts.join("\n")).toMatch(/NotoSans/);
    } finally {
      if (saved === undefined) delete process.env.FONTCONFIG_FILE;
      else process.env.FONTCONFIG_FILE = saved;
    }
  });
});
