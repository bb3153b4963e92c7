import { execFileSync } from "node:child_process";
import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as dashboardsRoute from "@/app/api/v1/custom-dashboards/route";
import * as publishRoute from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as queryRoute from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as deadLettersRoute from "@/app/api/v1/notifications/admin/dead-letters/route";
import * as fileRoute from "@/app/api/v1/report-files/[token]/route";
import * as outboxFileRoute from "@/app/api/v1/notifications/admin/demo-outbox/[id]/attachments/[file_id]/route";
import * as unsubscribeRoute from "@/app/api/v1/report-unsubscribe/[token]/route";
import type { Principal } from "@/lib/access/roles";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { putChannelConfig } from "@/lib/notifications/admin/channels";
import { deliveryHealth } from "@/lib/notifications/admin/delivery-health";
import { listDemoOutbox } from "@/lib/notifications/admin/demo-outbox";
import { putQuietHours } from "@/lib/notifications/admin/quiet-hours";
import { manualClock } from "@/lib/notifications/clock";
import { closeQueue, getQueue } from "@/lib/job-queue";
import type { ReportRenderer, Runtime } from "@/lib/notifications/pipeline/runtime";
import { tick } from "@/lib/notifications/pipeline/scheduler";
import { drainQueues } from "@/lib/worker";
import { reportHooks } from "./pipeline-hooks";
import { putOrganizationSettings } from "@/lib/organizations/settings";
import { renderDashboardReport } from "@/lib/reports/render";
import { createReportSchedule, sendReportNow, updateReportSchedule } from "@/lib/reports/schedules";
import { downloadLink, openReportFile } from "@/lib/reports/schedules-links";
import { call, tokenFor } from "@/test/helpers";
import { startReceiver, startSmtp, type ReceivedMail } from "@/test/support/notification-servers";
import { SCHEDULE_TEST_MANIFEST } from "@/test/support/report-schedules";

process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ url_allow_list: ["127.0.0.1"], in_process_worker: false, max_attempts: 3, backoff_base_seconds: 30 });

const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };
const EAST = ["loc_acme_bos", "loc_acme_chi", "loc_acme_nyc"];
const WEST = ["loc_acme_aus", "loc_acme_sfo"];
const NAMES: Record<string, string> = {
  loc_acme_nyc: "Manhattan Flagship",
  loc_acme_bos: "Boston Back Bay",
  loc_acme_chi: "Chicago Loop",
  loc_acme_aus: "Austin South Congress",
  loc_acme_sfo: "San Francisco Union Sq",
};
const FILTERS = { date: "2025-06-01 to 2025-07-01" };
// The pipeline runs on this clock; signed links are checked against the real one, so it runs ahead of it.
const START = new Date("2027-07-05T05:00:00Z");

let smtp: Awaited<ReturnType<typeof startSmtp>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const clock = manualClock(START);
/** Every render a run asks for, by scope (role and locations): the count that must be one per distinct scope. */
const renders: string[] = [];
let rt: Runtime & { queue: Awaited<ReturnType<typeof getQueue>> };
let dashboardId = "";

const counting: ReportRenderer = (principal, input) => {
  renders.push(`${principal.role}:${(principal.locationIds ?? []).join(",")}`);
  return renderDashboardReport(principal, input);
};

beforeAll(async () => {
  smtp = await startSmtp();
  receiver = await startReceiver();
  rt = { clock, queue: await getQueue(false), render: counting, reports: reportHooks };
  await putChannelConfig(admin, "email", { enabled: true, config: { host: "127.0.0.1", port: smtp.port, secure: false, from: "reports@acme.test" } });
  await putChannelConfig(admin, "webhook", { enabled: true, config: { url: `${receiver.url}/hook`, signing_secret: "whsec-reports-0123456789" } });
  await putChannelConfig(admin, "slack", { enabled: true, config: { mode: "webhook", webhook_url: `${receiver.url}/slack/T000/B000/XXXXXXXXXXXXXXXX` } });
  await putOrganizationSettings(admin, { image_origins: [], report_allowed_domains: ["example.com"] });
  // A second manager with the seeded one's scope (they share a render), and one in the west (a render of its own).
  const { system } = await getDb();
  for (const [id, email, locations] of [
    ["usr_acme_gm_east2", "gm-east2@acme.test", EAST],
    ["usr_acme_gm_west", "gm-west@acme.test", WEST],
  ] as const) {
    await system.query(
      `INSERT INTO users (id, org_id, email, name, role, location_ids, password_hash)
       SELECT $1, org_id, $2, 'Scheduled GM', role, $3, password_hash FROM users WHERE id = 'usr_acme_general_manager' ON CONFLICT (id) DO NOTHING`,
      [id, email, locations],
    );
  }
  const token = await tokenFor("acme", "admin");
  const created = await call(dashboardsRoute.POST, "POST", { token, body: { name: "Scheduled sales", slug: "scheduled-sales-run", spec_yaml: SCHEDULE_TEST_MANIFEST } });
  dashboardId = created.json.id;
  expect((await call(publishRoute.POST, "POST", { token, params: { id: dashboardId } })).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await closeQueue();
  await smtp.close();
  await receiver.close();
});

/** The PDF attachments of a raw MIME message (nodemailer's multipart/mixed, base64 parts). */
function pdfAttachments(mail: ReceivedMail): Buffer[] {
  const boundary = /boundary="?([^"\r\n;]+)"?/i.exec(mail.raw)?.[1];
  if (!boundary) return [];
  return mail.raw
    .split(`--${boundary}`)
    .map((part) => part.split(/\r?\n\r?\n/))
    .filter(([headers]) => /content-type:\s*application\/pdf/i.test(headers ?? ""))
    .map(([, ...body]) => Buffer.from(body.join("").replace(/\s+/g, ""), "base64"));
}

const pdfText = (pdf: Buffer) => execFileSync("pdftotext", ["-layout", "-", "-"], { input: pdf }).toString("utf8");
const header = (mail: ReceivedMail, name: string) => new RegExp(`^${name}:\\s*(.+)$`, "im").exec(mail.raw)?.[1]?.trim();
const mailsTo = (from: number, address: string) => smtp.received.slice(from).filter((m) => m.to.includes(address));
const deliveriesOf = (scheduleId: string) => withTenant(admin, (tx) => tx.notificationDelivery.findMany({ where: { scheduleId }, orderBy: [{ createdAt: "asc" }, { recipient: "asc" }] }));

/** What `…/query` answers a caller of `locations` for the table: location name -> orders. */
async function queryFigures(locations: string[]) {
  const token = await tokenFor("acme", "general_manager", { locationIds: locations });
  const res = await call(queryRoute.POST, "POST", { token, params: { id: dashboardId }, body: { filters: FILTERS, widget_ids: ["by_location", "orders_total"] } });
  expect(res.status).toBe(200);
  const rows = res.json.widgets.by_location.rows as { location: string; orders: number }[];
  return { rows, total: Number(res.json.widgets.orders_total.rows[0].orders) };
}

const figure = (n: number) => n.toLocaleString("en-US");

describe("scheduled reports: each recipient in their own scope", () => {
  it("renders once per distinct scope, mails each user their own figures (as …/query answers them), and skips a role that may not view", async () => {
    const schedule = await createReportSchedule(
      admin,
      { dashboard_id: dashboardId, name: "Weekly orders", cron: "0 8 * * 1", time_zone: "UTC", formats: ["pdf"], filters: FILTERS, paper: "a4", orientation: "portrait", tab: null, width: null, channels: ["email"], user_ids: ["usr_acme_general_manager", "usr_acme_gm_east2", "usr_acme_gm_west", "usr_acme_analyst"], addresses: [], group_ids: [], shared_location_ids: null, shared_approved: false, paused: false },
      clock.now(),
    );
    const mailsBefore = smtp.received.length;
    renders.length = 0;
    await sendReportNow(admin, schedule.id, rt);
    await drainQueues(rt);

    // Two scopes (east, west) rendered once each; the analyst's scope is asked once and refused by the dashboard's roles.
    expect([...renders].sort()).toEqual(["analyst:", `general_manager:${EAST.join(",")}`, `general_manager:${WEST.join(",")}`].sort());
    const deliveries = await deliveriesOf(schedule.id);
    expect(deliveries.map((d) => [d.recipient, d.status])).toEqual(
      expect.arrayContaining([
        ["gm@acme.test", "delivered"],
        ["gm-east2@acme.test", "delivered"],
        ["gm-west@acme.test", "delivered"],
        ["analyst@acme.test", "skipped"],
      ]),
    );
    expect(deliveries.find((d) => d.recipient === "analyst@acme.test")?.reason).toMatch(/may not view this dashboard/);
    // The message names the recipient's locations as people know them, not by id.
    expect(deliveries.find((d) => d.recipient === "gm-west@acme.test")?.body).toContain(`in the scope of general manager, locations ${WEST.map((id) => NAMES[id]).join(", ")}.`);

    const [east] = pdfAttachments(mailsTo(mailsBefore, "gm@acme.test")[0]);
    const [east2] = pdfAttachments(mailsTo(mailsBefore, "gm-east2@acme.test")[0]);
    const [west] = pdfAttachments(mailsTo(mailsBefore, "gm-west@acme.test")[0]);
    expect(east.subarray(0, 5).toString()).toBe("%PDF-");
    expect(east.equals(east2)).toBe(true);
    expect(east.equals(west)).toBe(false);

    for (const [pdf, scope] of [
      [east, EAST],
      [west, WEST],
    ] as const) {
      const text = pdfText(pdf);
      const expected = await queryFigures([...scope]);
      expect(text).toContain("Scheduled sales");
      expect(text).toContain(figure(expected.total));
      expect(expected.rows.map((r) => r.location).sort()).toEqual(scope.map((id) => NAMES[id]).sort());
      for (const row of expected.rows) expect(text).toMatch(new RegExp(`${row.location}\\s+${figure(Number(row.orders))}`));
      for (const id of Object.keys(NAMES).filter((l) => !scope.includes(l))) expect(text).not.toContain(NAMES[id]);
    }

    const mail = mailsTo(mailsBefore, "gm@acme.test")[0];
    expect(header(mail, "List-Unsubscribe")).toMatch(/^<http.*\/api\/v1\/report-unsubscribe\/.+>$/);
    expect(header(mail, "List-Unsubscribe-Post")).toBe("List-Unsubscribe=One-Click");
  }, 120_000);

  it("honours a one-click unsubscribe from the next run on", async () => {
    const schedule = await createReportSchedule(
      admin,
      { dashboard_id: dashboardId, name: "Unsubscribable", cron: "0 8 * * 1", time_zone: "UTC", formats: ["pdf"], filters: FILTERS, paper: "a4", orientation: "portrait", tab: null, width: null, channels: ["email"], user_ids: ["usr_acme_general_manager", "usr_acme_gm_west"], addresses: [], group_ids: [], shared_location_ids: null, shared_approved: false, paused: false },
      clock.now(),
    );
    let from = smtp.received.length;
    clock.advance(1_000);
    await sendReportNow(admin, schedule.id, rt);
    await drainQueues(rt);
    const link = header(mailsTo(from, "gm-west@acme.test")[0], "List-Unsubscribe")!.slice(1, -1);
    const token = decodeURIComponent(link.slice(link.lastIndexOf("/") + 1));
    const res = await call(unsubscribeRoute.POST, "POST", { params: { token }, rawBody: "List-Unsubscribe=One-Click", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ schedule_name: "Unsubscribable", recipient: "gm-west@acme.test", unsubscribed: true });

    from = smtp.received.length;
    clock.advance(1_000);
    await sendReportNow(admin, schedule.id, rt);
    await drainQueues(rt);
    expect(mailsTo(from, "gm-west@acme.test")).toHaveLength(0);
    expect(mailsTo(from, "gm@acme.test")).toHaveLength(1);
    const skipped = (await deliveriesOf(schedule.id)).filter((d) => d.recipient === "gm-west@acme.test" && d.status === "skipped");
    expect(skipped[0]?.reason).toBe("recipient unsubscribed from this report");
  }, 120_000);
});

describe("scheduled reports: email groups", () => {
  it("reads a group's members at each run: users in their own scope, other addresses the shared scope once approved", async () => {
    const groupId = "ngs_reports_run_group";
    await withTenant(admin, async (tx) => {
      const rule = await tx.notificationRule.create({
        data: { id: "nrl_reports_run_group", orgId: "org_acme", key: "reports.group.rule", name: "Group rule", baseRuleKey: "sales.gap_to_target", severity: "info", defaultChannels: ["email"], cadenceCron: "0 * * * *" },
      });
      // An address in the allowed domain and a user of the organization (in another case: addresses are compared in lower case).
      await tx.notificationGroupSubscription.create({ data: { id: groupId, orgId: "org_acme", ruleId: rule.id, groupName: "Regional leads", members: ["gm-west@acme.test", "lead@example.com"] } });
    });
    const schedule = await createReportSchedule(
      admin,
      { dashboard_id: dashboardId, name: "Group run", cron: "0 8 * * 1", time_zone: "UTC", formats: ["pdf"], filters: FILTERS, paper: "a4", orientation: "portrait", tab: null, width: null, channels: ["email"], user_ids: [], addresses: [], group_ids: [groupId], shared_location_ids: EAST, shared_approved: false, paused: false },
      clock.now(),
    );
    expect(schedule.group_ids).toEqual([groupId]);

    let from = smtp.received.length;
    renders.length = 0;
    clock.advance(1_000);
    await sendReportNow(admin, schedule.id, rt);
    await drainQueues(rt);
    // The user member gets their own (west) figures; the address waits for an admin's approval of the shared scope.
    expect(renders).toEqual([`general_manager:${WEST.join(",")}`]);
    const west = pdfText(pdfAttachments(mailsTo(from, "gm-west@acme.test")[0])[0]);
    for (const id of WEST) expect(west).toContain(NAMES[id]);
    for (const id of EAST) expect(west).not.toContain(NAMES[id]);
    expect(mailsTo(from, "lead@example.com")).toHaveLength(0);
    const first = (await deliveriesOf(schedule.id)).filter((d) => d.recipient === "lead@example.com");
    expect(first.map((d) => [d.status, d.reason])).toEqual([["skipped", expect.stringMatching(/admin's approval/)]]);

    // Membership is read at send time: a member added after the schedule was saved receives the next run.
    await withTenant(admin, (tx) => tx.notificationGroupSubscription.update({ where: { id: groupId }, data: { members: ["gm-east2@acme.test", "gm-west@acme.test", "lead@example.com"] } }));
    await updateReportSchedule(admin, schedule.id, { shared_approved: true }, clock.now());
    from = smtp.received.length;
    renders.length = 0;
    clock.advance(1_000);
    await sendReportNow(admin, schedule.id, rt);
    await drainQueues(rt);
    expect([...renders].sort()).toEqual([`admin:${EAST.join(",")}`, `general_manager:${EAST.join(",")}`, `general_manager:${WEST.join(",")}`].sort());
    for (const [address, scope] of [
      ["gm-east2@acme.test", EAST],
      ["lead@example.com", EAST],
      ["gm-west@acme.test", WEST],
    ] as const) {
      const text = pdfText(pdfAttachments(mailsTo(from, address)[0])[0]);
      const expected = await queryFigures([...scope]);
      expect(text).toContain(figure(expected.total));
      for (const id of Object.keys(NAMES).filter((l) => !scope.includes(l))) expect(text).not.toContain(NAMES[id]);
    }

    // A group removed later is a skipped delivery that says so, not a failed run.
    await withTenant(admin, (tx) => tx.notificationGroupSubscription.delete({ where: { id: groupId } }));
    clock.advance(1_000);
    await sendReportNow(admin, schedule.id, rt);
    await drainQueues(rt);
    const removed = (await deliveriesOf(schedule.id)).filter((d) => d.recipient === `group ${groupId}`);
    expect(removed.map((d) => [d.status, d.reason])).toEqual([["skipped", "this email group was removed"]]);
  }, 180_000);
});

describe("scheduled reports: the pipeline", () => {
  it("delivers a scheduled run at its cron time in its zone, PDF attached", async () => {
    clock.set(new Date("2027-07-06T05:00:00Z"));
    const schedule = await createReportSchedule(
      admin,
      { dashboard_id: dashboardId, name: "Berlin morning", cron: "0 8 * * *", time_zone: "Europe/Berlin", formats: ["pdf"], filters: FILTERS, paper: "a4", orientation: "landscape", tab: null, width: null, channels: ["email"], user_ids: ["usr_acme_admin"], addresses: [], group_ids: [], shared_location_ids: null, shared_approved: false, paused: false },
      clock.now(),
    );
    clock.set(new Date("2027-07-06T05:59:00Z"));
    await tick(rt);
    expect(await withTenant(admin, (tx) => tx.reportRun.count({ where: { scheduleId: schedule.id } }))).toBe(0);
    const from = smtp.received.length;
    // 08:00 in Berlin (summer time) is 06:00 UTC.
    clock.set(new Date("2027-07-06T06:00:30Z"));
    await tick(rt);
    await drainQueues(rt);
    const runs = await withTenant(admin, (tx) => tx.reportRun.findMany({ where: { scheduleId: schedule.id } }));
    expect(runs.map((r) => [r.scheduledFor.toISOString(), r.trigger, r.status])).toEqual([["2027-07-06T06:00:00.000Z", "cron", "sent"]]);
    const [mail] = mailsTo(from, "admin@acme.test");
    const [pdf] = pdfAttachments(mail);
    expect(pdfText(pdf)).toContain("Scheduled sales");
    // The message names the run's time in the schedule's zone (it printed 2027-07-06T06:00:00.000Z).
    expect(mail.raw.replace(/=\r?\n/g, "")).toContain("as of Jul 6, 2027, 8:00 AM (Europe/Berlin), in the scope of");
  }, 120_000);

  it("sends addresses, Slack and webhooks the shared scope only once an admin approved it, as signed links bound to that render", async () => {
    const base = { dashboard_id: dashboardId, name: "Shared", cron: "0 8 * * 1", time_zone: "UTC", formats: ["pdf"] as ("pdf" | "png")[], filters: FILTERS, paper: "a4" as const, orientation: "portrait" as const, tab: null, width: null, channels: ["email", "slack", "webhook"] as ("email" | "slack" | "webhook")[], user_ids: [], addresses: ["partner@example.com"], group_ids: [], shared_location_ids: WEST, shared_approved: false, paused: false };
    const schedule = await createReportSchedule(admin, base, clock.now());
    clock.advance(60_000);
    await sendReportNow(admin, schedule.id, rt);
    await drainQueues(rt);
    expect((await deliveriesOf(schedule.id)).map((d) => [d.channel, d.status, d.reason])).toEqual(
      expect.arrayContaining([["email", "skipped", expect.stringMatching(/admin's approval/)], ["slack", "skipped", expect.any(String)], ["webhook", "skipped", expect.any(String)]]),
    );

    await updateReportSchedule(admin, schedule.id, { shared_approved: true }, clock.now());
    const hooksBefore = receiver.received.length;
    const mailsBefore = smtp.received.length;
    clock.advance(60_000);
    await sendReportNow(admin, schedule.id, rt);
    await drainQueues(rt);
    const [pdf] = pdfAttachments(mailsTo(mailsBefore, "partner@example.com")[0]);
    const text = pdfText(pdf);
    for (const id of WEST) expect(text).toContain(NAMES[id]);
    for (const id of EAST) expect(text).not.toContain(NAMES[id]);

    const hook = receiver.received.slice(hooksBefore).find((r) => r.path === "/hook")!;
    expect(hook.headers["x-quarry-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const payload = JSON.parse(hook.body) as { type: string; files: { url: string; format: string; expires_at: string }[] };
    expect(payload.type).toBe("report");
    const url = payload.files[0].url;
    const token = decodeURIComponent(url.slice(url.lastIndexOf("/") + 1));
    const file = await call(fileRoute.GET, "GET", { params: { token } });
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("application/pdf");
    const slack = receiver.received.slice(hooksBefore).find((r) => r.path.startsWith("/slack/"))!;
    expect(JSON.parse(slack.body).text).toContain("/api/v1/report-files/");

    // The link expires; a forged or altered one opens nothing; a link naming this file with another scope finds nothing.
    await expect(openReportFile(token, new Date(clock.now().getTime() + 25 * 3600_000))).rejects.toThrow(/expired/);
    expect((await call(fileRoute.GET, "GET", { params: { token: `${token.slice(0, -4)}AAAA` } })).status).toBe(401);
    const stored = await withTenant(admin, (tx) => tx.reportFile.findMany({ select: { id: true, scopeKey: true }, orderBy: { createdAt: "desc" }, take: 50 }));
    const mine = stored.find((f) => f.scopeKey.endsWith(WEST.join(",")))!;
    const other = stored.find((f) => f.scopeKey !== mine.scopeKey)!;
    const crossed = await downloadLink({ orgId: "org_acme", id: mine.id, scopeKey: other.scopeKey }, new Date(clock.now().getTime() + 3600_000));
    expect((await call(fileRoute.GET, "GET", { params: { token: crossed.slice(crossed.lastIndexOf("/") + 1) } })).status).toBe(404);
    const globexLink = await downloadLink({ orgId: "org_globex", id: mine.id, scopeKey: mine.scopeKey }, new Date(clock.now().getTime() + 3600_000));
    expect((await call(fileRoute.GET, "GET", { params: { token: globexLink.slice(globexLink.lastIndexOf("/") + 1) } })).status).toBe(404);
  }, 120_000);

  it("sends outside recipients nothing of a version published after the approval, until an admin approves again (issue 41)", async () => {
    const token = await tokenFor("acme", "admin");
    const created = await call(dashboardsRoute.POST, "POST", { token, body: { name: "Versioned sales", slug: "versioned-sales-run", spec_yaml: SCHEDULE_TEST_MANIFEST } });
    const publish = async () => expect((await call(publishRoute.POST, "POST", { token, params: { id: created.json.id } })).status).toBe(200);
    await publish();
    const schedule = await createReportSchedule(
      admin,
      { dashboard_id: created.json.id, name: "Versioned", cron: "0 8 * * 1", time_zone: "UTC", formats: ["pdf"], filters: FILTERS, paper: "a4", orientation: "portrait", tab: null, width: null, channels: ["email", "webhook"], user_ids: ["usr_acme_admin"], addresses: ["partner@example.com"], group_ids: [], shared_location_ids: WEST, shared_approved: true, paused: false },
      clock.now(),
    );
    const outcome = async (since: Date) =>
      (await deliveriesOf(schedule.id)).filter((d) => d.createdAt >= since).map((d) => [d.channel, d.recipient === "admin@acme.test" ? "user" : "outside", d.status, d.status === "delivered" ? "" : (d.lastError ?? d.reason)]);

    // Published again while the run renders: what was rendered is not what the admin approved.
    let published = false;
    const racing: typeof rt = {
      ...rt,
      render: async (principal, input) => {
        if (!published) {
          published = true;
          await publish();
        }
        return counting(principal, input);
      },
    };
    clock.advance(60_000);
    let since = clock.now();
    await sendReportNow(admin, schedule.id, racing);
    await drainQueues(racing);
    expect(await outcome(since)).toEqual(
      expect.arrayContaining([
        ["email", "user", "delivered", ""],
        ["email", "outside", "dead", expect.stringMatching(/published again \(version 2\) after an admin approved version 1/)],
        ["webhook", "outside", "dead", expect.stringMatching(/published again/)],
      ]),
    );

    // The next run records them as skipped, with the reason; the schedule says it waits for a new approval.
    clock.advance(60_000);
    since = clock.now();
    await sendReportNow(admin, schedule.id, rt);
    await drainQueues(rt);
    expect(await outcome(since)).toEqual(expect.arrayContaining([["email", "outside", "skipped", expect.stringMatching(/receive nothing until an admin approves again/)], ["webhook", "outside", "skipped", expect.any(String)]]));

    expect(await updateReportSchedule(admin, schedule.id, { shared_approved: true }, clock.now())).toMatchObject({ shared_status: "approved", shared_approved_version: 2 });
    clock.advance(60_000);
    since = clock.now();
    const mailsBefore = smtp.received.length;
    await sendReportNow(admin, schedule.id, rt);
    await drainQueues(rt);
    expect((await outcome(since)).map((o) => o.slice(0, 3))).toEqual(expect.arrayContaining([["email", "outside", "delivered"], ["webhook", "outside", "delivered"]]));
    expect(mailsTo(mailsBefore, "partner@example.com")).toHaveLength(1);
  }, 180_000);

  it("retries a failing send with backoff, dead-letters it, and shows it in delivery health and the dead letters", async () => {
    // Behind the database's clock, so the queue hands out each retry as soon as the test's clock reaches it.
    clock.set(new Date("2025-07-07T05:00:00Z"));
    const schedule = await createReportSchedule(
      admin,
      { dashboard_id: dashboardId, name: "Doomed", cron: "0 8 * * 1", time_zone: "UTC", formats: ["pdf"], filters: FILTERS, paper: "a4", orientation: "portrait", tab: null, width: null, channels: ["email"], user_ids: ["usr_acme_admin"], addresses: [], group_ids: [], shared_location_ids: null, shared_approved: false, paused: false },
      clock.now(),
    );
    smtp.state.rejectWith = () => 421;
    try {
      clock.advance(60_000);
      renders.length = 0;
      await sendReportNow(admin, schedule.id, rt);
      for (;;) {
        await drainQueues(rt);
        const retrying = (await deliveriesOf(schedule.id)).filter((d) => d.status === "retrying");
        if (retrying.length === 0) break;
        clock.set(new Date(Math.min(...retrying.map((d) => d.nextAttemptAt!.getTime()))));
      }
    } finally {
      smtp.state.rejectWith = () => null;
    }
    const [dead] = await deliveriesOf(schedule.id);
    expect(dead).toMatchObject({ status: "dead", attempts: 3 });
    expect(dead.lastError).toMatch(/421/);
    // Retries send the file rendered once; they do not render again.
    expect(renders).toHaveLength(1);

    // Health over the last day of the test's clock (the deliveries are dated by it).
    const health = await deliveryHealth(admin, { hours: 24, limit: 500 }, clock.now());
    const seen = health.recent.find((d) => d.id === dead.id);
    expect(seen).toMatchObject({ rule_id: null, report_schedule_id: schedule.id, rule_key: "report: Doomed", status: "dead" });
    const letters = await call(deadLettersRoute.GET, "GET", { token: await tokenFor("acme", "admin") });
    expect(letters.json.items.map((d: { id: string }) => d.id)).toContain(dead.id);
  }, 120_000);

  it("honours the organization's quiet hours: e-mail deferred to the window's end", async () => {
    const schedule = await createReportSchedule(
      admin,
      { dashboard_id: dashboardId, name: "Quiet", cron: "0 8 * * 1", time_zone: "UTC", formats: ["pdf"], filters: FILTERS, paper: "a4", orientation: "portrait", tab: null, width: null, channels: ["email"], user_ids: ["usr_acme_admin"], addresses: [], group_ids: [], shared_location_ids: null, shared_approved: false, paused: false },
      clock.now(),
    );
    await putQuietHours(admin, { org: null, channels: { email: { start: "00:00", end: "23:59", action: "defer" } } }, clock.now());
    try {
      clock.set(new Date("2025-07-08T12:00:00Z"));
      await sendReportNow(admin, schedule.id, rt);
      await drainQueues(rt);
    } finally {
      await putQuietHours(admin, { org: null, channels: {} }, clock.now());
    }
    const [d] = await deliveriesOf(schedule.id);
    expect(d.status).toBe("pending");
    expect(d.reason).toMatch(/^deferred by quiet hours 00:00–23:59/);
    expect(d.nextAttemptAt!.getTime()).toBeGreaterThan(clock.now().getTime());
  }, 120_000);
});

describe("scheduled reports: the demo outbox", () => {
  it("shows a report e-mail's rendered files, opened by admins of every location only, and nothing of them to another organization", async () => {
    // The organization's e-mail becomes the demo's outbox, as the demo seed makes it (lib/notifications/admin/demo-outbox.ts).
    await withTenant(admin, (tx) => tx.notificationChannelConfig.update({ where: { orgId_kind: { orgId: admin.orgId, kind: "email" } }, data: { settings: { demo_outbox: true, from: "reports@acme.test" }, secretsEnc: null } }));
    const schedule = await createReportSchedule(
      admin,
      { dashboard_id: dashboardId, name: "Outbox report", cron: "0 8 * * 1", time_zone: "UTC", formats: ["pdf", "png"], filters: FILTERS, paper: "a4", orientation: "portrait", tab: null, width: null, channels: ["email"], user_ids: ["usr_acme_admin"], addresses: [], group_ids: [], shared_location_ids: null, shared_approved: false, paused: false },
      clock.now(),
    );
    clock.set(new Date(clock.now().getTime() + 3600_000));
    await sendReportNow(admin, schedule.id, rt);
    await drainQueues(rt);
    const [delivery] = await deliveriesOf(schedule.id);
    expect(delivery.reason).toMatch(/^kept in the demo outbox/);

    const outbox = await listDemoOutbox(admin, { limit: 50, offset: 0 });
    const mail = outbox.items.find((m) => m.id === delivery.id)!;
    expect(mail.attachments.map((a) => a.content_type).sort()).toEqual(["application/pdf", "image/png"]);
    const pdf = mail.attachments.find((a) => a.content_type === "application/pdf")!;
    const token = await tokenFor("acme", "admin");
    const params = { id: delivery.id, file_id: pdf.file_id };
    const opened = await outboxFileRoute.GET(new NextRequest(`http://localhost:3000/api/v1/notifications/admin/demo-outbox/${params.id}/attachments/${params.file_id}`, { headers: { authorization: `Bearer ${token}` } }), { params: Promise.resolve(params) });
    expect(opened.status).toBe(200);
    expect(opened.headers.get("content-disposition")).toBe(`attachment; filename="${pdf.filename.replace(/[^\w.-]/g, "_")}"`);
    expect(pdfText(Buffer.from(await opened.arrayBuffer()))).toContain("Scheduled sales");

    // An admin limited to some locations: a render of every location is not theirs to open.
    const eastAdmin: Principal = { ...admin, userId: "usr_acme_east_admin", locationIds: EAST };
    expect((await listDemoOutbox(eastAdmin, { limit: 50, offset: 0 })).items.find((m) => m.id === delivery.id)?.attachments).toEqual([]);
    const eastToken = await tokenFor("acme", "admin", { locationIds: EAST });
    expect((await call(outboxFileRoute.GET, "GET", { token: eastToken, params: { id: delivery.id, file_id: pdf.file_id } })).status).toBe(404);
    // Another organization: neither the message nor the file exists.
    const globexToken = await tokenFor("globex", "admin");
    expect((await call(outboxFileRoute.GET, "GET", { token: globexToken, params: { id: delivery.id, file_id: pdf.file_id } })).status).toBe(404);
    // A file of another delivery through this one: 404.
    expect((await call(outboxFileRoute.GET, "GET", { token, params: { id: delivery.id, file_id: "rfl_not_this_one" } })).status).toBe(404);
  }, 120_000);
});
