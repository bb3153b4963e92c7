import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as pictureRoute from "@/app/api/v1/alert-pictures/[token]/route";
import { createDashboard, publishDashboard } from "@/lib/dashboards/dashboards";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { closeQueue, getQueue } from "@/lib/job-queue";
import { putChannelConfig } from "@/lib/notifications/admin/channels";
import { manualClock } from "@/lib/notifications/clock";
import { picturesIn } from "@/lib/notifications/transports/picture-line";
import type { Runtime } from "@/lib/notifications/pipeline/runtime";
import { tick } from "@/lib/notifications/pipeline/scheduler";
import { drainQueues } from "@/lib/worker";
import { call } from "@/test/helpers";
import { startReceiver, startSmtp } from "@/test/support/notification-servers";
import { greyVariance, pngGreys } from "@/test/support/png";
import { ALERT_TEST_MANIFEST, EAST, WEST, addManagers, lastOfMonth, monthBeforeLastOrder, nextMonth, ordersBetween, principalOf } from "@/test/support/widget-alerts";
import { createAlert } from "./alerts";
import { CreateAlertBody, type CreateAlertInput } from "./contract";
import { alertDelivery, dispatchAlertMessage } from "./delivery";
import { evaluateAlerts } from "./evaluate";
import { alertHooks } from "./pipeline-hooks";

/*
 * Issue 45 §4 end to end on a real database, queue, SMTP server and webhook receiver: an evaluation's messages go out
 * through the notification pipeline's one fan-out, each recipient told the figure of their own scope, with the widget
 * drawn by the report renderer in that scope (inline in the e-mail, linked for the webhook), once.
 */

process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ url_allow_list: ["127.0.0.1"], in_process_worker: false, max_attempts: 2, backoff_base_seconds: 30 });

const admin = principalOf("usr_acme_admin", "admin", null);
let smtp: Awaited<ReturnType<typeof startSmtp>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const clock = manualClock(new Date());
let rt: Runtime & { queue: Awaited<ReturnType<typeof getQueue>> };
let dashboardId = "";
let month = "";

const alert = (input: Omit<CreateAlertInput, "dashboard_id">) => createAlert(admin, CreateAlertBody.parse({ dashboard_id: dashboardId, ...input }), clock.now());
const deliveriesOf = (alertId: string) =>
  withTenant(admin, async (tx) => {
    const messages = await tx.widgetAlertMessage.findMany({ where: { alertId }, select: { id: true } });
    return tx.notificationDelivery.findMany({ where: { alertMessageId: { in: messages.map((m) => m.id) } }, orderBy: [{ channel: "asc" }, { recipient: "asc" }] });
  });

/** The inline image of a raw e-mail: its Content-ID and bytes. */
function inlinePng(raw: string): { cid: string; bytes: Buffer } | null {
  const part = /Content-Type: image\/png[^\r\n]*\r\n(?:[^\r\n]+\r\n)*?Content-ID: <([^>]+)>(?:\r\n[^\r\n]+)*\r\n\r\n([A-Za-z0-9+/=\r\n]+)/.exec(raw);
  return part ? { cid: part[1], bytes: Buffer.from(part[2].replace(/\s+/g, ""), "base64") } : null;
}

beforeAll(async () => {
  smtp = await startSmtp();
  receiver = await startReceiver();
  rt = { clock, queue: await getQueue(false), alerts: alertHooks };
  await putChannelConfig(admin, "email", { enabled: true, config: { host: "127.0.0.1", port: smtp.port, secure: false, from: "alerts@acme.test" } });
  await putChannelConfig(admin, "webhook", { enabled: true, config: { url: `${receiver.url}/hook`, signing_secret: "whsec-alerts-0123456789" } });
  await addManagers([
    ["usr_acme_gm_east", "gm-east@acme.test", EAST],
    ["usr_acme_gm_west", "gm-west@acme.test", WEST],
  ]);
  dashboardId = (await createDashboard(admin, { name: "Alerted sales", slug: "alerted-sales-delivery", spec_yaml: ALERT_TEST_MANIFEST })).id;
  await publishDashboard(admin, dashboardId);
  month = await monthBeforeLastOrder(2);
}, 120_000);

afterAll(async () => {
  await Promise.all([smtp?.close(), receiver?.close()]);
  await closeQueue();
});

describe("alert messages through the notification pipeline", () => {
  it("each recipient is told their own scope's figure, with the widget drawn in that scope, once", async () => {
    const range = `${month} to ${lastOfMonth(month)}`;
    const [all, east, west] = await Promise.all([ordersBetween(month, nextMonth(month)), ordersBetween(month, nextMonth(month), EAST), ordersBetween(month, nextMonth(month), WEST)]);
    expect(new Set([all, east, west]).size).toBe(3);
    const made = await alert({
      name: "Orders watch",
      widget_id: "orders_total",
      filters: { date: range },
      condition: { kind: "above", threshold: 0 },
      cadence: { kind: "on_data_change" },
      recipients: { me: true, user_ids: ["usr_acme_gm_east", "usr_acme_gm_west"], channels: ["webhook"], user_channels: ["email", "in_app"] },
      shared_approved: true,
    });
    const report = await evaluateAlerts("org_acme", [made.id], { trigger: "data_change", occurrence: "data:delivery-test", now: clock.now(), deliver: alertDelivery(rt) });
    expect(report.messageIds.length).toBe(3);
    await drainQueues(rt);

    const rows = await deliveriesOf(made.id);
    expect(rows.map((d) => `${d.channel} ${d.recipient} ${d.status}`)).toEqual([
      "email admin@acme.test delivered",
      "email gm-east@acme.test delivered",
      "email gm-west@acme.test delivered",
      "in_app usr_acme_admin delivered",
      "in_app usr_acme_gm_east delivered",
      "in_app usr_acme_gm_west delivered",
      `webhook 127.0.0.1:${receiver.port} delivered`,
    ]);
    const bodyOf = (recipient: string) => rows.find((d) => d.channel === "email" && d.recipient === recipient)!.body;
    const figure = (n: number) => `Orders in all is ${n.toLocaleString("en-US")}: above 0.`;
    expect(bodyOf("admin@acme.test").split("\n")[0]).toBe(figure(all));
    expect(bodyOf("gm-east@acme.test").split("\n")[0]).toBe(figure(east));
    expect(bodyOf("gm-west@acme.test").split("\n")[0]).toBe(figure(west));
    expect(bodyOf("gm-east@acme.test")).not.toContain(west.toLocaleString("en-US"));
    expect(bodyOf("gm-east@acme.test")).toContain("/dashboards/custom/alerted-sales-delivery?f.date=");
    // The text links the picture too (what the demo outbox and the inbox show), one per message, the same for its scope's recipients.
    const linked = picturesIn(bodyOf("gm-east@acme.test"));
    expect(linked).toHaveLength(1);
    expect(picturesIn(rows.find((d) => d.channel === "in_app" && d.recipient === "usr_acme_gm_east")!.body)).toEqual(linked);
    expect(picturesIn(bodyOf("gm-west@acme.test"))[0].url).not.toBe(linked[0].url);

    // E-mail: the picture inline (the HTML refers to its Content-ID), drawn (not blank), one mail per recipient.
    const mails = smtp.received.filter((m) => m.raw.includes(`X-Quarry-Alert: ${made.id}`));
    expect(mails.map((m) => m.to[0]).sort()).toEqual(["admin@acme.test", "gm-east@acme.test", "gm-west@acme.test"]);
    const pictures = mails.map((m) => {
      const png = inlinePng(m.raw);
      expect(png, "an inline PNG").not.toBeNull();
      expect(m.raw).toContain(`cid:${png!.cid}`);
      expect(greyVariance(pngGreys(png!.bytes))).toBeGreaterThan(20);
      return png!.bytes.toString("base64");
    });
    // Three scopes, three figures: three different pictures.
    expect(new Set(pictures).size).toBe(3);

    // The webhook links the picture; the link draws it for the shared scope (the owner's: every location), and nothing else opens it.
    const hook = receiver.received.find((r) => r.path === "/hook" && JSON.parse(r.body).alert_id === made.id);
    const payload = JSON.parse(hook!.body) as { type: string; body: string; picture: { url: string; content_type: string } };
    expect(payload.type).toBe("alert");
    expect(payload.body.split("\n")[0]).toBe(figure(all));
    const token = new URL(payload.picture.url).pathname.split("/").pop()!;
    const opened = await call(pictureRoute.GET, "GET", { params: { token } });
    expect(opened.status).toBe(200);
    expect(opened.headers.get("content-type")).toBe("image/png");
    const forged = await call(pictureRoute.GET, "GET", { params: { token: `${token.slice(0, -4)}AAAA` } });
    expect(forged.status).toBe(401);
    expect(forged.json.detail).toBeTruthy();

    // In the app: the admin's inbox holds the message.
    const inbox = await withTenant(admin, (tx) => tx.notificationInboxItem.findMany({ where: { userId: "usr_acme_admin", title: { contains: "Orders in all" } } }));
    expect(inbox.length).toBe(1);

    // A second hand-off of the same messages (a redelivered job) sends nothing.
    for (const id of report.messageIds) expect(await dispatchAlertMessage(rt, "org_acme", id)).toBe(0);
    await drainQueues(rt);
    expect((await deliveriesOf(made.id)).length).toBe(rows.length);
  }, 180_000);

  it("the minute tick evaluates cron alerts when due and data-change alerts when the warehouse moved, each once", async () => {
    const cron = await alert({ name: "Hourly", widget_id: "orders_total", filters: { date: `${month} to ${lastOfMonth(month)}` }, condition: { kind: "above", threshold: 0 }, cadence: { kind: "cron", cron: "0 * * * *" }, recipients: { me: true, user_channels: ["in_app"] } });
    const start = clock.now();
    clock.set(new Date(Math.ceil(start.getTime() / 3_600_000) * 3_600_000 + 60_000));
    await tick(rt);
    await drainQueues(rt);
    const evaluated = await withTenant(admin, (tx) => tx.widgetAlertEvaluation.findMany({ where: { alertId: cron.id } }));
    expect(evaluated.map((e) => e.trigger)).toEqual(["cron"]);
    // The same hour again: nothing new.
    await tick(rt);
    await drainQueues(rt);
    expect(await withTenant(admin, (tx) => tx.widgetAlertEvaluation.count({ where: { alertId: cron.id } }))).toBe(1);
    expect((await deliveriesOf(cron.id)).map((d) => `${d.channel} ${d.status}`)).toEqual(["in_app delivered"]);

    // Data-change alerts are queued when the warehouse version has moved since last heard, and only then.
    const jobs = () => withTenant(admin, (tx) => alertHooks.schedule(tx, "org_acme", clock.now()));
    await jobs();
    expect((await jobs()).filter((j) => j.trigger === "data_change")).toEqual([]);
    // A write to a warehouse table (a no-op update of one row) moves the version (migration 0036's triggers).
    await (await getDb()).system.query("UPDATE sales_targets SET target_amount = target_amount WHERE org_id = 'org_acme' AND month = (SELECT min(month) FROM sales_targets WHERE org_id = 'org_acme')");
    const after = (await jobs()).filter((j) => j.trigger === "data_change");
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ orgId: "org_acme", trigger: "data_change" });
    // A new data-change alert is heard at once, on the data as it is.
    await alert({ name: "New", widget_id: "orders_total", condition: { kind: "no_data" }, cadence: { kind: "on_data_change" }, recipients: { me: true, user_channels: ["in_app"] } });
    expect((await jobs()).filter((j) => j.trigger === "data_change")).toHaveLength(1);
    expect((await jobs()).filter((j) => j.trigger === "data_change")).toEqual([]);
  }, 180_000);
});
