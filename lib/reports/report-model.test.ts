import { beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "@/lib/access/roles";
import type { WidgetResult } from "@/lib/dashboards/contract";
import { seedSampleDashboard } from "@/lib/dashboards/dashboards";
import { formatInstant } from "@/lib/dashboards/format";
import { grantForPrincipal } from "@/lib/dashboards/policy";
import { queryGranted } from "@/lib/dashboards/query";
import { tableCells } from "@/lib/dashboards/widget-figures";
import { viewColumnFormats } from "@/lib/dashboards/wiring";
import type { Block, ReportModel } from "./layout";
import { DEFAULT_REPORT_LIMITS } from "./limits";
import { type ReportSource, reportModel } from "./report-model";

/*
 * The report's model, which the PDF and the PNG both draw: built from the granted dashboard by the viewer's own
 * functions, its tables print every cell as the viewer's table does (tableCells in the declared formats): order ids
 * as stored, the all-time totals' revenue as money (issue 44 §5, issue 46 §4).
 */

const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };
let dashboardId: string;

beforeAll(async () => {
  dashboardId = (await seedSampleDashboard(admin)).id;
}, 120_000);

async function built(request: { tab?: string; widget?: string; format: "pdf" | "png" }) {
  const granted = await grantForPrincipal(admin, dashboardId, "published");
  const results: Record<string, WidgetResult> = {};
  const source: ReportSource = {
    granted,
    unpassable: () => new Error("unpassable"),
    locked: {},
    query: async (filters, widgetIds) => {
      const answer = await queryGranted(granted, "editor", filters, widgetIds);
      Object.assign(results, answer.widgets);
      return answer;
    },
    scopeLine: async () => "Admin",
  };
  const now = new Date();
  return { ...(await reportModel(source, { filters: {}, ...request }, DEFAULT_REPORT_LIMITS, now)), granted, results, now };
}

const blockOf = (model: ReportModel, id: string): Block => model.sections.flatMap((s) => s.blocks).find((b) => b.id === id)!.block;

describe("reportModel", () => {
  it("prints table cells as the viewer's table: order ids as stored, the SQL totals' revenue as money", async () => {
    const { model, granted, results } = await built({ format: "pdf", tab: "analysis" });
    if (!granted.parsed.ok) throw new Error("the sample does not validate");
    const view = { manifest: granted.parsed.value.manifest, widgets: granted.parsed.value.widgets };
    for (const id of ["order_grid", "channel_totals"]) {
      const block = blockOf(model, id);
      if (block.kind !== "table") throw new Error(`${id} is a ${block.kind}`);
      const widget = granted.parsed.value.widgetsById.get(id)!;
      const result = results[id];
      const cells = tableCells(result.columns, result.rows, viewColumnFormats(view, widget));
      expect(block.rows).toEqual(result.rows.slice(0, block.rows.length).map((row) => cells.names.map((c) => cells.cell(c, row[c]))));
    }
    const orders = blockOf(model, "order_grid");
    const totals = blockOf(model, "channel_totals");
    if (orders.kind !== "table" || totals.kind !== "table") throw new Error("not tables");
    const idColumn = orders.columns.indexOf("Order id");
    expect(orders.rows.length).toBeGreaterThan(0);
    for (const row of orders.rows) expect(row[idColumn]).toMatch(/^\d+$/);
    const revenue = totals.columns.indexOf("Revenue");
    for (const row of totals.rows) expect(row[revenue]).toMatch(/^\$\d{1,3}(,\d{3})*\.\d{2}$/);
  });

  it("names the organization's zone in the snapshot line, and draws one widget alone across the page", async () => {
    const { model, now } = await built({ format: "png", widget: "channel_totals" });
    expect(model.lines[0]).toBe(`Snapshot: ${formatInstant(now, "America/New_York")} · Version 1`);
    expect(model.sections.flatMap((s) => s.blocks).map((b) => [b.id, b.x, b.w])).toEqual([["channel_totals", 0, 12]]);
  });
});
