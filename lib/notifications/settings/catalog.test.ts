import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { withTenant } from "@/lib/db/tenant";
import { kpiFigure } from "@/lib/dashboards/widget-figures";
import { getDb } from "@/lib/db/client";
import { orgView, viewColumnFormats } from "@/lib/dashboards/wiring";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { findBaseRule } from "./catalog";

/*
 * A rule's text prints revenue as the dashboards print it (the revenue KPI's declared format, lib/dashboards/format.ts):
 * "took less than $2,500.00", where it said "took less than 2,500" with no unit (issue 44 §5).
 */
const sample = (() => {
  const parsed = parseDashboardYaml(fs.readFileSync(path.join(process.cwd(), "docs/manifests/sample-dashboard.yaml"), "utf8"));
  if (!parsed.ok) throw new Error("the sample does not validate");
  return { manifest: parsed.dashboard.manifest, widgets: parsed.dashboard.widgets };
})();
const revenueTile = sample.widgets.find((w) => w.metadata.id === "revenue_kpi")!;
/** The figure the sample's revenue tile shows for `value`. */
const asTheTile = (value: number) => kpiFigure(revenueTile, ["value"], [{ value }], viewColumnFormats(sample, revenueTile)).text;

describe("rule texts", () => {
  it("print the floor and each location's revenue as the revenue tile prints money", async () => {
    const rule = findBaseRule("sales.revenue_below_floor")!;
    const floor = 1_000_000_000;
    const params = rule.params.parse({ min_revenue: floor });
    const finding = await withTenant({ orgId: "org_acme" }, (tx) => rule.evaluate(tx, params, new Date()), { role: rule.role, readOnly: true });
    if (!finding) throw new Error("no location reaches a billion a day, so the rule fires");
    expect(finding.subject).toContain(`took less than ${asTheTile(floor)} on `);
    expect(asTheTile(floor)).toBe("$1,000,000,000.00");
    const locations = (finding.values as { locations: { name: string; revenue: number }[] }).locations;
    expect(finding.body.split("\n")).toEqual(locations.map((l) => `${l.name}: ${asTheTile(l.revenue)}`));
  });

  it("print money in the organization's currency, as its revenue tile does (EUR shows €)", async () => {
    const { system } = await getDb();
    const eur = orgView(sample, "EUR");
    const tile = eur.widgets.find((w) => w.metadata.id === "revenue_kpi")!;
    const asTheEuroTile = (value: number) => kpiFigure(tile, ["value"], [{ value }], viewColumnFormats(eur, tile)).text;
    const rule = findBaseRule("sales.revenue_below_floor")!;
    await system.query("UPDATE organizations SET currency = 'EUR' WHERE id = 'org_acme'");
    try {
      const finding = await withTenant({ orgId: "org_acme" }, (tx) => rule.evaluate(tx, rule.params.parse({ min_revenue: 2500 }), new Date()), { role: rule.role, readOnly: true });
      if (!finding) throw new Error("no location reaches 2,500 every day (none without sales does), so the rule fires");
      expect(asTheEuroTile(2500)).toBe("€2,500.00");
      expect(finding.subject).toContain(`took less than ${asTheEuroTile(2500)} on `);
    } finally {
      await system.query("UPDATE organizations SET currency = 'USD' WHERE id = 'org_acme'");
    }
  });
});
