import "@/test/embedded-analytics";
import { describe, expect, it } from "vitest";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as seed from "@/app/api/v1/custom-dashboards/%5Fseed/route";
import { principalFromBearer } from "@/lib/auth/bearer";
import { config, configSingleton } from "@/lib/config";
import { loadDashboard } from "@/lib/dashboards/page-data";
import { userSqlQueue } from "@/lib/query/execute";
import { runWidgetQuery } from "@/lib/query/run";
import { call, tokenFor } from "@/test/helpers";
import { paced } from "@/test/machine-pace";
import { sqlWidgetDashboard } from "@/test/sql-widget-dashboard";
import { PACE } from "./probe";

/*
 * Issue 31 §3: a dashboard request that cannot get an engine slot in time answers 503 with
 * Retry-After, never a 500, and the page of that dashboard still renders (without data: its viewer
 * asks again with back-off, components/dashboards/query-client.ts). Every user-SQL slot is held by
 * one of acme's long statements (an organization alone may take them all); acme's dashboard request
 * waits past the queue's deadline.
 */
process.env.QUARRY_USER_SQL_QUEUE_MS = "400";
configSingleton.set(undefined);

const LONG = "select count(*) as n from generate_series(1, 1000000000)";

describe("a dashboard request while every engine slot is held", () => {
  it("answers 503 with Retry-After, and the dashboard page renders without data instead of failing", async () => {
    const admin = await tokenFor("acme", "admin");
    const seeded = await call(seed.POST, "POST", "/api/v1/custom-dashboards/_seed", { token: admin });
    expect(seeded.status).toBeLessThan(300);
    const { id, slug } = seeded.json as { id: string; slug: string };
    // Warm: the analytics engine is up before the slot is taken.
    expect((await call(query.POST, "POST", { token: admin, params: { id }, body: { widget_ids: ["revenue_kpi"] } })).status).toBe(200);

    const holding = Array.from({ length: config().userSql.total }, () =>
      runWidgetQuery({ scope: { orgId: "org_acme" }, dashboard: sqlWidgetDashboard(LONG), widgetId: "w", filterValues: {}, now: new Date(), timeZone: "UTC", statementTimeoutMs: 4_000 }).catch((e: unknown) => e),
    );
    // Every long statement in acme's line, running or waiting behind those that run: acme's request queues after them.
    await userSqlQueue().until(({ lines }) => (lines.org_acme?.running ?? 0) + (lines.org_acme?.waiting ?? 0) === holding.length);
    try {
      const busy = await call(query.POST, "POST", { token: admin, params: { id }, body: { filters: { date: "last week" } } });
      expect(busy.status).toBe(503);
      expect(busy.headers.get("retry-after")).toBe("5");
      expect(String((busy.json as { detail: string }).detail)).toMatch(/busy/i);

      const page = await loadDashboard(await principalFromBearer(admin), slug, { date: "last week" });
      expect(page?.ok).toBe(true);
      expect(page?.ok && page.results).toEqual({});
    } finally {
      await Promise.all(holding);
    }
    // Once the slots are free the same request is answered, as the viewer asks again after a 503. The engines the
    // long statements ran on restart at their limit (PGlite cannot cancel), and this test's queue turns a request
    // away after 400 ms, so the first asks may still find acme's slots waiting on a restarting engine.
    const answeredBy = performance.now() + paced(30_000, PACE);
    let again = await call(query.POST, "POST", { token: admin, params: { id }, body: { filters: { date: "last week" } } });
    while (again.status === 503 && performance.now() < answeredBy) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      again = await call(query.POST, "POST", { token: admin, params: { id }, body: { filters: { date: "last week" } } });
    }
    expect(again.status).toBe(200);
  }, paced(180_000, PACE));
});
