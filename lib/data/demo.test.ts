import { describe, expect, it } from "vitest";
import type { Principal } from "@/lib/access/roles";
import { findOrganization } from "@/lib/auth/directory";
import { SAMPLE_SLUG, seedSampleDashboard } from "@/lib/dashboards/dashboards";
import { queryDashboard } from "@/lib/dashboards/query";
import { withTenant } from "@/lib/db/tenant";
import { orgTableSchema } from "@/lib/db/org-schema";
import { DEMO_ORGS, locationId } from "@/lib/demo/seed";
import { DEMO_SPEND_DAYS, DEMO_TABLE, marketingSpendCsv, seedDemoTables } from "./demo";
import { findTableEntry } from "./tables";

describe("the demo organizations' marketing_spend table", () => {
  it("is written the same way on every machine: a row per day, location and channel, ending today in the organization's zone", () => {
    const acme = DEMO_ORGS.find((o) => o.slug === "acme")!;
    // 03:30 UTC on 1 December is still 30 November in New York.
    const now = new Date("2026-12-01T03:30:00Z");
    const csv = marketingSpendCsv(acme, now);
    expect(csv).toBe(marketingSpendCsv(acme, now));
    const lines = csv.trimEnd().split("\n");
    expect(lines[0]).toBe("day,location_code,channel,spend,clicks");
    expect(lines).toHaveLength(1 + DEMO_SPEND_DAYS * acme.locations.length * 3);
    expect(lines.at(-1)).toMatch(/^2026-11-30,SFO,email,\d+\.\d\d,\d+$/);
    expect(lines[1]).toMatch(/^2026-09-02,NYC,search,/);
  });

  it("is loaded once per organization the way an upload is, with inferred types and rows by location", async () => {
    await seedDemoTables();
    // A second start finds it in place.
    expect(await seedDemoTables()).toBe(0);
    for (const demo of DEMO_ORGS) {
      const org = (await findOrganization(demo.slug))!;
      const entry = await withTenant({ orgId: org.id }, (tx) => findTableEntry(tx, DEMO_TABLE));
      expect(entry?.columns).toEqual([
        { name: "day", type: "date" },
        { name: "location_code", type: "text" },
        { name: "channel", type: "text" },
        { name: "spend", type: "numeric" },
        { name: "clicks", type: "integer" },
      ]);
      expect(entry?.location).toEqual({ name: "location_code", by: "code" });
      expect(entry?.rowCount).toBe(DEMO_SPEND_DAYS * demo.locations.length * 3);

      // A member limited to the first location reads only its rows.
      const table = `"${orgTableSchema(org.id)}"."${DEMO_TABLE}"`;
      const first = demo.locations[0].code;
      const seen = await withTenant({ orgId: org.id, locationIds: [locationId(demo.slug, first)] }, (tx) =>
        tx.$queryRawUnsafe<{ code: string; n: number }[]>(`SELECT location_code AS code, count(*)::int AS n FROM ${table} GROUP BY 1`),
      );
      expect(seen).toEqual([{ code: first, n: DEMO_SPEND_DAYS * 3 }]);
    }
  });

  it("the sample dashboard's widget over it answers the table's sums, within the viewer's locations", async () => {
    await seedDemoTables();
    const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "session" };
    const scoped = ["loc_acme_nyc", "loc_acme_bos"];
    const manager: Principal = { ...admin, userId: "usr_acme_general_manager", role: "general_manager", locationIds: scoped };
    await seedSampleDashboard(admin);
    const table = `"${orgTableSchema("org_acme")}"."${DEMO_TABLE}"`;
    for (const principal of [admin, manager]) {
      const answer = await queryDashboard(principal, SAMPLE_SLUG, { filters: { date: null }, widget_ids: ["marketing_spend"], version: "published" });
      const widget = answer.widgets.marketing_spend as { rows?: Record<string, unknown>[]; error?: unknown };
      expect(widget.error ?? null).toBeNull();
      const expected = await withTenant(principal, (tx) =>
        tx.$queryRawUnsafe<{ channel: string; spend: string }[]>(`SELECT channel, sum(spend)::text AS spend FROM ${table} GROUP BY channel ORDER BY channel`),
      );
      const got = [...(widget.rows ?? [])].map((r) => ({ channel: String(r.channel), spend: Number(r.spend) })).sort((a, b) => a.channel.localeCompare(b.channel));
      expect(got).toEqual(expected.map((e) => ({ channel: e.channel, spend: Number(e.spend) })));
    }
    // The manager's rows are their two locations' only: less than the whole organization's.
    const count = (principal: Principal) => withTenant(principal, async (tx) => (await tx.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${table}`))[0].n);
    expect(await count(manager)).toBe(DEMO_SPEND_DAYS * 3 * scoped.length);
    expect(await count(admin)).toBeGreaterThan(await count(manager));
  });
});
