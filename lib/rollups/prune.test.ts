import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as item from "@/app/api/v1/custom-dashboards/[id]/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import { configSingleton } from "@/lib/config";
import { recordUnrecordedVersionRollups } from "@/lib/dashboards/version-rollups";
import { withTenant } from "@/lib/db/tenant";
import { dashboardRollups } from "@/lib/query/rollup-definition";
import { call, tokenFor } from "@/test/helpers";
import { publishRollups, sampleWithExtras } from "@/test/support/sample-variants";
import { refreshOrganizationRollups } from "./build";
import { rollupId } from "./registry";

/*
 * Rollups no dashboard uses any more are removed with their rows (issue 31 §2, docs/rollups.md
 * "Removal"): used are those a dashboard's published version declares, or a version a live embed pins;
 * a failed rollup keeps no rows.
 */
const SMALL = `
    - id: small
      from: orders JOIN locations ON locations.id = orders.location_id
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: location_id, column: orders.location_id }
        - { id: region, column: locations.region }
        - { id: channel, column: orders.channel }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
      rollups:
        - { name: by_region_month, time_dimension: order_date, granularity: month, location_dimension: location_id, dimensions: [region], measures: [revenue] }
        - { name: by_channel_month, time_dimension: order_date, granularity: month, location_dimension: location_id, dimensions: [channel], measures: [revenue] }`;

const [byRegion, byChannel] = dashboardRollups([sampleWithExtras(SMALL, "").datasets.get("small")!]);
const SAMPLE_YAML = fs.readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "manifests", "sample-dashboard.yaml"), "utf8");

/** Each rollup of the organization with how many rows and days it holds. */
function stored(orgId: string) {
  return withTenant({ orgId }, (tx) =>
    tx.$queryRaw<{ name: string; state: string; rows: number; days: number }[]>`
      SELECT name, state, (SELECT count(*)::int FROM rollup_rows WHERE rollup_id = r.id) AS rows, (SELECT count(*)::int FROM rollup_days WHERE rollup_id = r.id) AS days
        FROM rollups r ORDER BY name`,
  );
}

const names = async (orgId: string) => (await stored(orgId)).map((r) => r.name);
const removedBy = async (orgId: string) => (await refreshOrganizationRollups(orgId)).filter((o) => o.state === "removed").map((o) => o.name);
const deleteDashboard = (orgId: string, id: string) => withTenant({ orgId }, (tx) => tx.dashboard.delete({ where: { id } }));

describe("removing rollups no dashboard uses", () => {
  it("keeps what a published version or a live embed declares and removes the rest with its rows, in its organization only", async () => {
    const first = await publishRollups("org_acme", [byRegion]);
    const second = await publishRollups("org_acme", [byRegion, byChannel]);
    await publishRollups("org_globex", [byRegion, byChannel]);
    expect(await removedBy("org_acme")).toEqual([]);
    expect(await removedBy("org_globex")).toEqual([]);
    const built = await stored("org_acme");
    expect(built.map((r) => [r.name, r.state])).toEqual([["by_channel_month", "ready"], ["by_region_month", "ready"]]);
    expect(built.every((r) => r.rows > 0 && r.days > 0)).toBe(true);

    // The second dashboard's next version no longer declares by_channel_month, but an embed pins its first version.
    await publishRollups("org_acme", [byRegion], second);
    const embed = await withTenant({ orgId: "org_acme" }, (tx) =>
      tx.dashboardEmbed.create({ data: { id: "emb_prune", orgId: "org_acme", dashboardId: second, version: 1, allowedOrigins: [], expiresAt: new Date(Date.now() + 3_600_000), createdBy: "test" } }),
    );
    expect(await removedBy("org_acme")).toEqual([]);
    await withTenant({ orgId: "org_acme" }, (tx) => tx.dashboardEmbed.update({ where: { id: embed.id }, data: { revokedAt: new Date() } }));
    expect(await removedBy("org_acme")).toEqual(["by_channel_month"]);
    expect(await stored("org_acme")).toEqual([expect.objectContaining({ name: "by_region_month", state: "ready" })]);
    // Its rows went with it (as the application sees every row of the organization).
    const orphans = await withTenant({ orgId: "org_acme" }, (tx) =>
      tx.$queryRaw<{ n: number }[]>`SELECT (SELECT count(*)::int FROM rollup_rows WHERE rollup_id = ${rollupId(byChannel)}) + (SELECT count(*)::int FROM rollup_days WHERE rollup_id = ${rollupId(byChannel)}) AS n`,
    );
    expect(orphans).toEqual([{ n: 0 }]);
    // Globex's copy of the same definition is its own, and untouched.
    expect(await names("org_globex")).toEqual(["by_channel_month", "by_region_month"]);

    // Used by the second dashboard still; gone with it.
    await deleteDashboard("org_acme", first);
    expect(await removedBy("org_acme")).toEqual([]);
    await deleteDashboard("org_acme", second);
    expect(await removedBy("org_acme")).toEqual(["by_region_month"]);
    expect(await stored("org_acme")).toEqual([]);
  }, 180_000);

  it("removes nothing while a published version's rollups are unrecorded, until boot records them from its manifest", async () => {
    const used = await publishRollups("org_acme", [byRegion]);
    expect((await refreshOrganizationRollups("org_acme")).map((o) => [o.name, o.state])).toEqual([["by_region_month", "ready"]]);
    // A dashboard published before migration 0038, its rollups unrecorded (its manifest, here, no longer validates: it declares none).
    await withTenant({ orgId: "org_acme" }, async (tx) => {
      await tx.dashboard.create({ data: { id: "dsh_older", orgId: "org_acme", name: "Older", slug: "older", draftYaml: "", publishedVersion: 1, createdBy: "test", updatedBy: "test" } });
      await tx.dashboardVersion.create({ data: { orgId: "org_acme", dashboardId: "dsh_older", version: 1, name: "Older", specYaml: "", publishedBy: "test" } });
    });
    await deleteDashboard("org_acme", used);
    expect(await removedBy("org_acme")).toEqual([]);
    expect(await recordUnrecordedVersionRollups()).toBe(1);
    expect(await recordUnrecordedVersionRollups()).toBe(0);
    expect(await removedBy("org_acme")).toEqual(["by_region_month"]);
  }, 120_000);

  it("records the rollups a publish declares, and the worker removes them once their dashboard is deleted", async () => {
    const admin = await tokenFor("acme", "admin");
    const created = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "Prune", slug: "prune-sample", spec_yaml: SAMPLE_YAML.replace("sample-sales", "prune-sample") } });
    expect(created.status).toBe(201);
    expect((await call(publish.POST, "POST", { token: admin, params: { id: created.json.id } })).status).toBe(200);
    const declared = dashboardRollups(sampleWithExtras("", "").datasets.values());
    const [version] = await withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRaw<{ rollup_ids: string[] }[]>`SELECT rollup_ids FROM dashboard_versions WHERE dashboard_id = ${created.json.id}`);
    expect(version.rollup_ids).toEqual(declared.map(rollupId));
    expect(await removedBy("org_acme")).toEqual([]);
    expect((await call(item.DELETE, "DELETE", { token: admin, params: { id: created.json.id } })).status).toBe(204);
    expect((await removedBy("org_acme")).sort()).toEqual(declared.map((d) => d.name).sort());
  }, 240_000);

  it("keeps no rows of a rollup whose build failed", async () => {
    await publishRollups("org_globex", [byRegion]);
    await refreshOrganizationRollups("org_globex");
    expect((await stored("org_globex")).find((r) => r.name === "by_region_month")?.rows).toBeGreaterThan(0);
    process.env.QUARRY_ROLLUP_MAX_ROWS = "5";
    configSingleton.set(undefined);
    try {
      await withTenant({ orgId: "org_globex" }, (tx) => tx.$executeRaw`UPDATE rollups SET state = 'pending'`);
      const outcomes = await refreshOrganizationRollups("org_globex");
      expect(outcomes.find((o) => o.name === "by_region_month")?.state).toBe("failed");
    } finally {
      delete process.env.QUARRY_ROLLUP_MAX_ROWS;
      configSingleton.set(undefined);
    }
    expect((await stored("org_globex")).find((r) => r.name === "by_region_month")).toEqual({ name: "by_region_month", state: "failed", rows: 0, days: 0 });
  }, 120_000);
});
