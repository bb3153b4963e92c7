import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as dashboardsRoute from "@/app/api/v1/custom-dashboards/route";
import * as publishRoute from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import type { Principal } from "@/lib/access/roles";
import { withTenant } from "@/lib/db/tenant";
import { putChannelConfig } from "@/lib/notifications/admin/channels";
import { manualClock } from "@/lib/notifications/clock";
import { closeQueue, getQueue } from "@/lib/job-queue";
import type { Runtime } from "@/lib/notifications/pipeline/runtime";
import { drainQueues } from "@/lib/worker";
import { createReportSchedule, sendReportNow } from "@/lib/reports/schedules";
import { call, tokenFor } from "@/test/helpers";
import { startReceiver } from "@/test/support/notification-servers";
import { SCHEDULE_TEST_MANIFEST } from "@/test/support/report-schedules";

// The loopback receiver stands in for the Slack Web API and its upload URLs; the configuration is read on first use.
const receiver = await startReceiver();
process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ url_allow_list: ["127.0.0.1"], in_process_worker: false, slack_api_url: `${receiver.url}/api/` });

const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };
// Ahead of the real clock: signed links are checked against it.
const clock = manualClock(new Date("2027-07-05T05:00:00Z"));
let rt: Runtime & { queue: Awaited<ReturnType<typeof getQueue>> };
let dashboardId = "";

beforeAll(async () => {
  rt = { clock, queue: await getQueue(false) };
  await putChannelConfig(admin, "slack", { enabled: true, config: { mode: "bot", bot_token: "xoxb-0000-test-token-abcdef", channel: "C0REPORTS" } });
  const token = await tokenFor("acme", "admin");
  const created = await call(dashboardsRoute.POST, "POST", { token, body: { name: "Scheduled sales", slug: "scheduled-sales-slack", spec_yaml: SCHEDULE_TEST_MANIFEST } });
  dashboardId = created.json.id;
  expect((await call(publishRoute.POST, "POST", { token, params: { id: dashboardId } })).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await closeQueue();
  await receiver.close();
});

async function sendToSlack(name: string) {
  const schedule = await createReportSchedule(
    admin,
    { dashboard_id: dashboardId, name, cron: "0 8 * * 1", time_zone: "UTC", formats: ["pdf"], filters: { date: "2025-06-01 to 2025-07-01" }, paper: "a4", orientation: "portrait", tab: null, width: null, channels: ["slack"], user_ids: [], addresses: [], group_ids: [], shared_location_ids: null, shared_approved: true, paused: false },
    clock.now(),
  );
  const from = receiver.received.length;
  clock.advance(60_000);
  await sendReportNow(admin, schedule.id, rt);
  await drainQueues(rt);
  const delivery = await withTenant(admin, (tx) => tx.notificationDelivery.findFirstOrThrow({ where: { scheduleId: schedule.id } }));
  return { delivery, requests: receiver.received.slice(from) };
}

describe("scheduled reports to Slack in bot mode", () => {
  it("uploads the file to the channel", async () => {
    receiver.state.apiReply = (req) =>
      req.path === "/api/files.getUploadURLExternal" ? { ok: true, upload_url: `${receiver.url}/upload/F0REPORT`, file_id: "F0REPORT" } : { ok: true, files: [{ id: "F0REPORT" }] };
    const { delivery, requests } = await sendToSlack("Slack upload");
    expect(delivery.status).toBe("delivered");
    expect(requests.map((r) => r.path)).toEqual(["/api/files.getUploadURLExternal", "/upload/F0REPORT", "/api/files.completeUploadExternal"]);
    expect(requests[1].body.startsWith("%PDF-")).toBe(true);
    const completed = new URLSearchParams(requests[2].body);
    expect(completed.get("channel_id")).toBe("C0REPORTS");
    expect(JSON.parse(completed.get("files") ?? "[]")).toEqual([{ id: "F0REPORT", title: expect.stringMatching(/\.pdf$/) }]);
  }, 120_000);

  it("posts signed download links when the bot may not upload", async () => {
    receiver.state.apiReply = (req) => (req.path === "/api/files.getUploadURLExternal" ? { ok: false, error: "missing_scope" } : { ok: true, channel: "C0REPORTS", ts: "1.0" });
    const { delivery, requests } = await sendToSlack("Slack links");
    expect(delivery.status).toBe("delivered");
    const post = requests.find((r) => r.path === "/api/chat.postMessage");
    expect(post).toBeDefined();
    expect(new URLSearchParams(post!.body).get("text")).toMatch(/\/api\/v1\/report-files\/[\w-]+\.[\w-]+\.[\w-]+/);
  }, 120_000);
});
