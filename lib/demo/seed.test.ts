import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { DEMO_ORGS, warehouseWindow } from "./seed";

describe("demo warehouse window", () => {
  it("ends today in the organization's zone and starts on the first day of the month 23 months back", () => {
    // 03:30 UTC on 1 December is still 30 November in New York and already 1 December in Berlin.
    const now = new Date("2026-12-01T03:30:00Z");
    expect(warehouseWindow(now, "America/New_York")).toEqual({ from: "2024-12-01", to: "2026-11-30" });
    expect(warehouseWindow(now, "Europe/Berlin")).toEqual({ from: "2025-01-01", to: "2026-12-01" });
    expect(warehouseWindow(new Date("2026-11-26T12:00:00Z"), "UTC")).toEqual({ from: "2024-12-01", to: "2026-11-26" });
    // Across a year boundary.
    expect(warehouseWindow(new Date("2027-01-15T12:00:00Z"), "UTC")).toEqual({ from: "2025-02-01", to: "2027-01-15" });
  });

  it("holds no order after today (the test database was seeded today)", async () => {
    const { system } = await getDb();
    const spans = await system.query<{ org_id: string; first: string; last: string; orders: number }>(
      "SELECT org_id, min(order_date)::text AS first, max(order_date)::text AS last, count(*)::int AS orders FROM orders GROUP BY org_id ORDER BY org_id",
    );
    expect(spans.map((s) => s.org_id)).toEqual(["org_acme", "org_globex"]);
    const now = new Date();
    for (const span of spans) {
      const org = DEMO_ORGS.find((o) => `org_${o.slug}` === span.org_id)!;
      const { from, to } = warehouseWindow(now, org.timeZone);
      expect(span.last <= to, `${span.org_id} last order ${span.last} is after today ${to}`).toBe(true);
      // Seeded at most a day ago: the last order is from yesterday or today, the first from the first day of its window.
      expect(Date.parse(to) - Date.parse(span.last)).toBeLessThanOrEqual(86_400_000);
      expect(span.first.endsWith("-01")).toBe(true);
      expect(span.first <= from).toBe(true);
      expect(span.orders).toBeGreaterThan(35_000);
    }
  });
});
