import { beforeAll, describe, expect, it } from "vitest";
import { createDashboard, publishDashboard, updateDashboard } from "@/lib/dashboards/dashboards";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { Forbidden, Invalid } from "@/lib/errors";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { ALERT_TEST_MANIFEST, principalOf } from "@/test/support/widget-alerts";
import { createAlert, getAlert, listAlerts, updateAlert } from "./alerts";
import { CreateAlertBody } from "./contract";
import { evaluateAlerts } from "./evaluate";

const admin = principalOf("usr_acme_admin", "admin", null);
const analyst = principalOf("usr_acme_analyst", "analyst", null);
const globexAdmin = principalOf("usr_globex_admin", "admin", null, "globex");

/** The test dashboard with `alerts` (YAML lines indented under spec) after its datasets. */
const withAlerts = (alerts: string) => ALERT_TEST_MANIFEST.replace("  tabs:\n", `  alerts:\n${alerts}  tabs:\n`);

const DROP_ALERT = `    - id: orders-drop
      name: Orders dropped
      widget_id: orders_total
      filters: { date: last month }
      condition: { kind: change, against: month, measure: percent, direction: decrease, amount: 20 }
      cadence: { kind: cron, cron: "0 8 * * *" }
`;

describe("alerts in a dashboard manifest", () => {
  it("parse with the dashboard; an unknown widget, a column the widget lacks and a chart without its column are errors at their line and column", () => {
    expect(parseDashboardYaml(withAlerts(DROP_ALERT)).ok).toBe(true);
    const bad = withAlerts(`    - id: wrong
      name: Wrong
      widget_id: nowhere
      condition: { kind: above, threshold: 1 }
      cadence: { kind: on_data_change }
    - id: column
      name: Column
      widget_id: by_location
      column: margin
      condition: { kind: above, threshold: 1 }
      cadence: { kind: on_data_change }
    - id: table
      name: Table
      widget_id: by_location
      condition: { kind: no_data }
      cadence: { kind: on_data_change }
`);
    const parsed = parseDashboardYaml(bad);
    expect(parsed.ok).toBe(false);
    const lines = bad.split("\n");
    /** 1-based line and column of `value` on the line holding `text`. */
    const at = (text: string, value: string) => {
      const line = lines.findIndex((l) => l.includes(text));
      return { line: line + 1, column: lines[line].indexOf(value) + 1 };
    };
    const errors = parsed.ok ? [] : parsed.errors;
    expect(errors.map((e) => e.path.join("."))).toEqual(["spec.alerts.0.widget_id", "spec.alerts.1.column", "spec.alerts.2.column"]);
    expect(errors[0]).toMatchObject({ ...at("widget_id: nowhere", "nowhere"), message: "no widget has id 'nowhere'" });
    expect(errors[1]).toMatchObject(at("column: margin", "margin"));
    expect(errors[1].message).toContain("'margin' is not a column of widget 'by_location'");
    expect(errors[2].message).toContain("name the column to watch");
  });
});

describe("an alert's filter values in a manifest", () => {
  it("are checked like the viewer's, at the value's line and column, once per filter", () => {
    const bad = withAlerts(`    - id: bad-date
      name: Bad date
      widget_id: orders_total
      filters: { date: the day after never }
      condition: { kind: above, threshold: 1 }
      cadence: { kind: on_data_change }
`);
    const parsed = parseDashboardYaml(bad);
    expect(parsed.ok).toBe(false);
    const errors = parsed.ok ? [] : parsed.errors;
    expect(errors.map((e) => e.path.join("."))).toEqual(["spec.alerts.0.filters.date"]);
    const lines = bad.split("\n");
    const line = lines.findIndex((l) => l.includes("the day after never"));
    expect(errors[0]).toMatchObject({ line: line + 1, column: lines[line].indexOf("the day after never") + 1 });
    // The words are the viewer's own (lib/query/filters.ts), as the API's 422 for an alert made on screen says them.
    expect(errors[0].message).toMatch(/^filter 'date': /);
  });
});

describe("pushing and publishing a manifest with alerts", () => {
  let dashboardId = "";
  beforeAll(async () => {
    dashboardId = (await createDashboard(admin, { name: "Declared alerts", slug: "declared-alerts", spec_yaml: withAlerts(DROP_ALERT) })).id;
  }, 120_000);

  it("creates the declared alert when published, keeps it in place on a republish, edits it only through the manifest, and removes it when no longer declared", async () => {
    // A draft declares; nothing watches until it is published.
    expect((await listAlerts(admin, { limit: 50, offset: 0, dashboard_id: dashboardId })).total).toBe(0);
    await publishDashboard(admin, dashboardId);
    const [declared] = (await listAlerts(admin, { limit: 50, offset: 0, dashboard_id: dashboardId })).items;
    expect(declared).toMatchObject({ manifest_id: "orders-drop", name: "Orders dropped", widget_id: "orders_total", owner_id: "usr_acme_admin", cadence: { kind: "cron", cron: "0 8 * * *" } });
    expect(declared.condition).toEqual({ kind: "change", against: "month", measure: "percent", direction: "decrease", amount: 20 });

    // Its switches change here; its declaration only through the manifest.
    await updateAlert(admin, declared.id, { muted: true }, new Date());
    await expect(updateAlert(admin, declared.id, { name: "Renamed" }, new Date())).rejects.toMatchObject({ kind: "conflict" });

    await updateDashboard(admin, dashboardId, { spec_yaml: withAlerts(DROP_ALERT.replace("amount: 20", "amount: 30")) });
    await publishDashboard(admin, dashboardId);
    const kept = await getAlert(admin, declared.id);
    expect(kept).toMatchObject({ id: declared.id, muted: true, condition: { amount: 30 } });

    await updateDashboard(admin, dashboardId, { spec_yaml: ALERT_TEST_MANIFEST });
    await publishDashboard(admin, dashboardId);
    expect((await listAlerts(admin, { limit: 50, offset: 0, dashboard_id: dashboardId })).total).toBe(0);
  });

  it("an analyst alerts only themselves, and another organization sees none of it", async () => {
    const mine = CreateAlertBody.parse({ dashboard_id: dashboardId, name: "Mine", widget_id: "orders_total", condition: { kind: "above", threshold: 1 }, cadence: { kind: "on_data_change" } });
    const own = await createAlert(analyst, mine, new Date());
    expect(own.owner_id).toBe("usr_acme_analyst");
    await expect(createAlert(analyst, { ...mine, recipients: { ...mine.recipients, user_ids: ["usr_acme_admin"] } }, new Date())).rejects.toBeInstanceOf(Forbidden);
    await expect(createAlert(admin, { ...mine, widget_id: "nowhere" }, new Date())).rejects.toBeInstanceOf(Invalid);
    await evaluateAlerts("org_acme", [own.id], { trigger: "cron", occurrence: "cron:own", now: new Date() });

    expect((await listAlerts(globexAdmin, { limit: 50, offset: 0 })).total).toBe(0);
    await expect(getAlert(globexAdmin, own.id)).rejects.toMatchObject({ kind: "not_found" });
    const seen = await withTenant(globexAdmin, async (tx) => [await tx.widgetAlert.count(), await tx.widgetAlertState.count(), await tx.widgetAlertEvaluation.count(), await tx.widgetAlertMessage.count()]);
    expect(seen).toEqual([0, 0, 0, 0]);
    // Evaluating another organization's alert id finds nothing to evaluate.
    expect((await evaluateAlerts("org_globex", [own.id], { trigger: "test", occurrence: null, now: new Date() })).evaluations).toEqual([]);
    const acme = await withTenant(admin, (tx) => tx.widgetAlertEvaluation.count({ where: { alertId: own.id } }));
    expect(acme).toBe(1);
  });
});

describe("an alert's condition in words", () => {
  it("reads its thresholds in the watched column's format, money in the organization's currency (issue 44 §5)", async () => {
    const money = ALERT_TEST_MANIFEST.replace("{ id: revenue, type: sql, expression: sum(orders.amount) }", "{ id: revenue, type: sql, expression: sum(orders.amount), format: currency }");
    const { id } = await createDashboard(admin, { name: "Money alerts", slug: "money-alerts", spec_yaml: money });
    await publishDashboard(admin, id);
    const below = CreateAlertBody.parse({ dashboard_id: id, name: "Low revenue", widget_id: "by_location", column: "revenue", per: "location_id", condition: { kind: "below", threshold: 2500 }, cadence: { kind: "on_data_change" } });
    const made = await createAlert(admin, below, new Date());
    expect(made.condition_text).toBe("below $2,500.00");
    expect(made.widget_name).toBe("Orders by location");
    const { system } = await getDb();
    await system.query("UPDATE organizations SET currency = 'EUR' WHERE id = 'org_acme'");
    try {
      expect((await getAlert(admin, made.id)).condition_text).toBe("below €2,500.00");
    } finally {
      await system.query("UPDATE organizations SET currency = 'USD' WHERE id = 'org_acme'");
    }
    // A column without a declared format reads as a grouped number.
    const orders = await createAlert(admin, { ...below, name: "Few orders", column: "orders" }, new Date());
    expect(orders.condition_text).toBe("below 2,500");
  });
});
