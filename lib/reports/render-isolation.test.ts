import { NextRequest } from "next/server";
import { beforeAll, describe, expect, it } from "vitest";
import * as exportRoute from "@/app/api/v1/custom-dashboards/[id]/export/route";
import * as queryRoute from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as publicExport from "@/app/api/v1/public/export/route";
import type { Principal } from "@/lib/access/roles";
import { withTenant } from "@/lib/db/tenant";
import { TimedOut } from "@/lib/errors";
import { call, tokenFor } from "@/test/helpers";
import { greyVariance, pngGreys } from "@/test/support/png";
import { DEFAULT_REPORT_LIMITS } from "./limits";
import { renderDashboardReport } from "./render";

/*
 * Renders isolated and bounded, through the real export endpoints (issue 41 §5): the review's pie
 * that made resvg panic and the server exit, a render past its time limit, and the save-time rule
 * that refuses such options. The test process is the server: it must survive each.
 */

const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };

/** One pie over inline rows, on a public page that offers both downloads. */
function pieDashboard(id: string, slices: number, series: string): string {
  const rows = Array.from({ length: slices }, (_, i) => `{ channel: "channel ${i}", revenue: ${1_000 + i} }`).join(", ");
  return `version: "1.0"
kind: dashboard
metadata: { id: ${id}, name: Pie ${id} }
platform:
  roles: [admin, general_manager, analyst]
  public: true
  downloads: { pdf: true, png: true }
spec:
  tabs: [{ id: main, name: Main, widgets: [mix] }]
---
version: "1.0"
kind: widget
metadata: { id: mix, name: Channel mix }
spec:
  component: echarts
  layout: { x: 0, y: 0, w: 12, h: 5 }
  data: { kind: static, rows: [${rows}] }
  display:
    echarts:
      option:
        series:
${series}`;
}

/** The review's payload, as it would sit in a manifest. */
const CRASH_SERIES = `          - type: pie
            radius: ["0%", "100000000%"]
            label:
              fontSize: 1000000
              position: inside`;
const SANE_SERIES = `          - type: pie
            radius: ["0%", "65%"]
            label:
              fontSize: 12
              position: inside`;

let adminToken: string;

async function created(token: string, slug: string, yaml: string) {
  const res = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token, body: { name: slug, slug, spec_yaml: yaml } });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json.id as string;
}

async function exported(token: string | null, id: string, search: string) {
  const req = new NextRequest(new URL(`/api/v1/custom-dashboards/${id}/export${search}`, "http://localhost:3000"), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return exportRoute.GET(req, { params: Promise.resolve({ id }) });
}

async function publicFile(query: Record<string, string>) {
  return publicExport.GET(new NextRequest(new URL(`/api/v1/public/export?${new URLSearchParams(query)}`, "http://localhost:3000")), { params: Promise.resolve({}) });
}

/** A picture of `type`, or a `{"detail": …}` error: never anything else. */
async function pictureOrDetail(res: Response, type: string) {
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status === 200) {
    expect(res.headers.get("content-type")).toBe(type);
    if (type === "image/png") expect(greyVariance(pngGreys(bytes))).toBeGreaterThan(50);
    else expect(Buffer.from(bytes.subarray(0, 5)).toString("latin1")).toBe("%PDF-");
  } else {
    expect(res.status).toBeGreaterThanOrEqual(422);
    expect(JSON.parse(Buffer.from(bytes).toString("utf8"))).toEqual({ detail: expect.anything() });
  }
  return res.status;
}

beforeAll(async () => {
  adminToken = await tokenFor("acme", "admin");
}, 120_000);

describe("option bounds at save", () => {
  it("refuses the crash payload with the line and column of each value", async () => {
    const res = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: adminToken, body: { name: "Crash", slug: "crash-refused", spec_yaml: pieDashboard("crash-refused", 3, CRASH_SERIES) } });
    expect(res.status).toBe(422);
    const items = res.json.detail as { loc: (string | number)[]; msg: string; line?: number; column?: number }[];
    expect(items).toEqual([
      expect.objectContaining({ line: 23, column: 28, msg: expect.stringMatching(/"100000000%" is out of range/) }),
      expect.objectContaining({ line: 25, column: 25, msg: expect.stringMatching(/1000000 is out of range: must be a number from 1 to 200/) }),
    ]);
  });
});

describe("the crash payload through the export endpoints", () => {
  it("stored before the rule: an error for that request (anonymous PNG and PDF, the editor's download), and the server draws the next report", async () => {
    // Saved with sane sizes, then a version holding the payload published as one stored before the
    // rule would be (versions are written once, so a new one).
    const id = await created(adminToken, "crash-stored", pieDashboard("crash-stored", 3, SANE_SERIES));
    await withTenant({ orgId: admin.orgId }, async (tx) => {
      await tx.dashboardVersion.create({ data: { orgId: admin.orgId, dashboardId: id, version: 1, name: "crash-stored", specYaml: pieDashboard("crash-stored", 3, CRASH_SERIES), publishedBy: admin.userId } });
      await tx.dashboard.update({ where: { id }, data: { publishedVersion: 1 } });
    });
    // The manifest no longer validates where it is read, so nothing of it reaches a renderer.
    for (const format of ["png", "pdf"]) expect(await pictureOrDetail(await publicFile({ org: "acme", slug: "crash-stored", format }), format === "png" ? "image/png" : "application/pdf")).toBe(503);
    const editor = await exported(adminToken, id, "?format=png");
    expect(editor.status).toBe(422);
    expect(JSON.stringify(await editor.json())).toContain("100000000%");
    // The draft (sane sizes) is drawn by the same server.
    expect(await pictureOrDetail(await exported(adminToken, id, "?format=png&version=draft"), "image/png")).toBe(200);
  }, 120_000);

  it("a valid chart 1,000 grid rows tall, as an anonymous 4,000 px PNG (it made resvg panic): a picture, cut at the tallest image", async () => {
    const tall = pieDashboard("crash-tall", 3, SANE_SERIES).replace("layout: { x: 0, y: 0, w: 12, h: 5 }", "layout: { x: 0, y: 0, w: 12, h: 1000 }");
    const id = await created(adminToken, "crash-tall", tall);
    await withTenant({ orgId: admin.orgId }, async (tx) => {
      await tx.dashboardVersion.create({ data: { orgId: admin.orgId, dashboardId: id, version: 1, name: "crash-tall", specYaml: tall, publishedBy: admin.userId } });
      await tx.dashboard.update({ where: { id }, data: { publishedVersion: 1 } });
    });
    const res = await publicFile({ org: "acme", slug: "crash-tall", format: "png", width: "4000" });
    expect(res.headers.get("x-report-cut")).toBe("1");
    expect(await pictureOrDetail(res, "image/png")).toBe(200);
    for (const format of ["pdf", "png"]) expect(await pictureOrDetail(await publicFile({ org: "acme", slug: "crash-tall", format }), format === "png" ? "image/png" : "application/pdf")).toBe(200);
  }, 180_000);
});

describe("the render time limit", () => {
  it("kills a render past it with 504 for that request while other requests are served", async () => {
    const small = await created(adminToken, "pie-small", pieDashboard("pie-small", 5, SANE_SERIES));
    const bomb = await created(adminToken, "pie-bomb", pieDashboard("pie-bomb", 5_000, "          - type: pie"));
    const globex = await tokenFor("globex", "admin");
    const other = await created(globex, "pie-other", pieDashboard("pie-other", 5, SANE_SERIES));
    // Both draw processes warm, then a small render's time on this machine and a limit well above it.
    await Promise.all([renderDashboardReport(admin, { dashboardId: small, filters: {}, format: "pdf", version: "draft" }), exported(globex, other, "?format=png&version=draft")]);
    const started = performance.now();
    await renderDashboardReport(admin, { dashboardId: small, filters: {}, format: "pdf", version: "draft" });
    const smallMs = performance.now() - started;
    const renderMs = Math.max(2_000, Math.ceil(smallMs * 10));
    expect(renderMs).toBeLessThan(DEFAULT_REPORT_LIMITS.renderMs);

    const bombStarted = performance.now();
    const stopped = renderDashboardReport(admin, { dashboardId: bomb, filters: {}, format: "pdf", version: "draft" }, { ...DEFAULT_REPORT_LIMITS, renderMs }).then(
      () => null,
      (error: unknown) => ({ error, ms: performance.now() - bombStarted }),
    );
    // Meanwhile: the organization's own query, and another organization's download (the render line is per organization).
    const query = await call(queryRoute.POST, "POST", { token: adminToken, params: { id: small }, body: { widget_ids: ["mix"], version: "draft" } });
    expect(query.status).toBe(200);
    expect(await pictureOrDetail(await exported(globex, other, "?format=png&version=draft"), "image/png")).toBe(200);
    const servedBy = performance.now() - bombStarted;

    const outcome = await stopped;
    expect(outcome?.error).toBeInstanceOf(TimedOut);
    expect(outcome!.ms).toBeGreaterThanOrEqual(renderMs);
    expect(servedBy).toBeLessThan(outcome!.ms);
    // An endpoint answers TimedOut as 504 with its detail (lib/api/errors.ts). The server draws on.
    const after = await exported(adminToken, small, "?format=pdf&version=draft");
    expect(after.status).toBe(200);
  }, 180_000);
});
