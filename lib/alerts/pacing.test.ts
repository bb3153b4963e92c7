import { beforeAll, describe, expect, it, vi } from "vitest";
import { createDashboard, publishDashboard } from "@/lib/dashboards/dashboards";
import { withTenant } from "@/lib/db/tenant";
import { backgroundPacer, databaseActivity } from "@/lib/db/priority";
import { inSlot } from "@/lib/query/execute";
import { measurePace, paced } from "@/test/machine-pace";
import { ALERT_TEST_MANIFEST, principalOf } from "@/test/support/widget-alerts";
import { createAlert } from "./alerts";
import { CreateAlertBody } from "./contract";
import { evaluateAlerts } from "./evaluate";

// The alert worker yields to viewers (issue 45 §5, lib/db/priority.ts): while a viewer's user SQL runs or waits,
// a paced evaluation records nothing and runs no query of its own; it goes on once the viewer's work ends.

const admin = principalOf("usr_acme_admin", "admin", null);
let dashboardId = "";
let alertIds: string[] = [];

const evaluationCount = () => withTenant(admin, (tx) => tx.widgetAlertEvaluation.count({ where: { alertId: { in: alertIds } } }));

/** A viewer's piece of user SQL that holds its slot until told to end: interactive work for as long as the test wants. */
function viewerHoldingASlot() {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  const holding = inSlot({ orgId: "org_acme" }, 60_000, () => ended);
  return { end, holding };
}

beforeAll(async () => {
  const created = await createDashboard(admin, { name: "Paced sales", slug: "paced-sales", spec_yaml: ALERT_TEST_MANIFEST });
  dashboardId = created.id;
  await publishDashboard(admin, dashboardId);
  const made = [];
  for (const [name, threshold] of [["paced above", 0], ["paced below", 1e12]] as const) {
    const condition = name === "paced above" ? { kind: "above", threshold } : { kind: "below", threshold };
    made.push(await createAlert(admin, CreateAlertBody.parse({ dashboard_id: dashboardId, name, widget_id: "orders_total", filters: {}, condition, cadence: { kind: "on_data_change" }, recipients: { me: true, user_channels: ["in_app"] } }), new Date()));
  }
  alertIds = made.map((a) => a.id);
}, 120_000);

describe("pacing the alert worker beside viewers", () => {
  it("records nothing while a viewer's user SQL runs, and evaluates every alert once it ends", async () => {
    const pace = measurePace();
    const viewer = viewerHoldingASlot();
    expect(databaseActivity().interactive).toBe(1);
    let settled = false;
    const evaluation = evaluateAlerts("org_acme", alertIds, { trigger: "data_change", occurrence: "data:paced", now: new Date(), pacer: backgroundPacer({ leastShare: 0 }) }).finally(() => (settled = true));
    // The worker's own event: it is asleep, waiting for the viewer.
    await vi.waitFor(() => expect(databaseActivity().yielding).toBe(1), { timeout: paced(30_000, pace), interval: 10 });
    // The database answers other work meanwhile (these reads take their turns on the engine), and the worker still waits.
    for (let i = 0; i < 5; i++) expect(await evaluationCount()).toBe(0);
    expect(settled).toBe(false);
    expect(databaseActivity().yielding).toBe(1);

    viewer.end();
    await viewer.holding;
    const report = await evaluation;
    expect(report.evaluations.map((e) => e.measured.outcome).sort()).toEqual(["met", "met"]);
    expect(await evaluationCount()).toBe(2);
    expect(databaseActivity()).toMatchObject({ interactive: 0, yielding: 0 });
  });

  it("does not pace 'test now': someone waits for it, so it goes to the slots as interactive work", async () => {
    const pace = measurePace();
    const viewer = viewerHoldingASlot();
    let settled = false;
    const tested = evaluateAlerts("org_acme", alertIds, { trigger: "test", occurrence: null, now: new Date() }).finally(() => (settled = true));
    // Either the result cache answered it at once, or its query waits for the viewer's slot like any viewer's; never asleep.
    await vi.waitFor(() => expect(settled || databaseActivity().waiting === 1).toBe(true), { timeout: paced(30_000, pace), interval: 10 });
    expect(databaseActivity().yielding).toBe(0);
    viewer.end();
    await viewer.holding;
    expect((await tested).evaluations).toHaveLength(2);
  });
});
