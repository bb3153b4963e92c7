import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { withTenant } from "@/lib/db/tenant";
import { kpiFigure } from "@/lib/dashboards/widget-figures";
import { viewColumnFormats } from "@/lib/dashboards/wiring";
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
});
