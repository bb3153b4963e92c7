import { beforeAll, describe, expect, it } from "vitest";
import * as dashboardsRoute from "@/app/api/v1/custom-dashboards/route";
import * as publishRoute from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as settingsRoute from "@/app/api/v1/organization/settings/route";
import * as schedulesRoute from "@/app/api/v1/report-schedules/route";
import * as scheduleRoute from "@/app/api/v1/report-schedules/[id]/route";
import * as sendRoute from "@/app/api/v1/report-schedules/[id]/send/route";
import * as emailGroupsRoute from "@/app/api/v1/report-email-groups/route";
import * as memberRoute from "@/app/api/v1/members/[id]/route";
import { withTenant } from "@/lib/db/tenant";
import { call, tokenFor, tokenForMember } from "@/test/helpers";
import { SCHEDULE_TEST_MANIFEST } from "@/test/support/report-schedules";

const GM_SCOPE = ["loc_acme_nyc", "loc_acme_bos", "loc_acme_chi"];
let admin: string;
let gm: string;
let analyst: string;
let globex: string;
let dashboardId = "";

beforeAll(async () => {
  [admin, gm, analyst, globex] = await Promise.all([
    tokenFor("acme", "admin"),
    tokenFor("acme", "general_manager", { locationIds: GM_SCOPE }),
    tokenFor("acme", "analyst"),
    tokenFor("globex", "admin"),
  ]);
  const created = await call(dashboardsRoute.POST, "POST", { token: admin, body: { name: "Scheduled sales", slug: "scheduled-sales", spec_yaml: SCHEDULE_TEST_MANIFEST } });
  expect(created.status).toBe(201);
  dashboardId = created.json.id;
  expect((await call(publishRoute.POST, "POST", { token: admin, params: { id: dashboardId } })).status).toBe(200);
  // An email group of each organization (admins set them up for notification rules).
  for (const org of ["acme", "globex"]) {
    await withTenant({ orgId: `org_${org}` }, async (tx) => {
      const rule = await tx.notificationRule.create({
        data: { id: `nrl_${org}_report_groups`, orgId: `org_${org}`, key: "reports.groups", name: "Groups", baseRuleKey: "sales.gap_to_target", severity: "info", defaultChannels: ["email"], cadenceCron: "0 * * * *" },
      });
      await tx.notificationGroupSubscription.create({ data: { id: `ngs_${org}_report_group`, orgId: `org_${org}`, ruleId: rule.id, groupName: `${org} leads`, members: ["a@example.com", `gm@${org}.test`] } });
    });
  }
});

const base = () => ({ dashboard_id: dashboardId, name: "Weekly sales", cron: "0 8 * * 1", time_zone: "Europe/Berlin", channels: ["email"], user_ids: ["usr_acme_general_manager"] });
const create = (token: string, body: object) => call(schedulesRoute.POST, "POST", { token, body });

describe("report schedules: create, list, edit, pause, delete", () => {
  it("keeps a schedule with its next run in its own time zone, lists it, pauses and deletes it", async () => {
    const made = await create(admin, { ...base(), formats: ["pdf", "png"], filters: { date: "2025-06-01 to 2025-07-01" } });
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({ name: "Weekly sales", dashboard_name: "Scheduled sales", formats: ["pdf", "png"], paused: false, last_run: null, shared_role: "admin", shared_location_ids: [] });
    // 08:00 in Berlin on a Monday is 06:00 or 07:00 UTC, never 08:00.
    const next = new Date(made.json.next_run_at);
    expect(next.getUTCDay()).toBe(1);
    expect([6, 7]).toContain(next.getUTCHours());

    const list = await call(schedulesRoute.GET, "GET", `/api/v1/report-schedules?dashboard_id=${dashboardId}`, { token: admin });
    expect(list.status).toBe(200);
    expect(list.json.items.map((s: { id: string }) => s.id)).toContain(made.json.id);

    const paused = await call(scheduleRoute.PATCH, "PATCH", { token: admin, params: { id: made.json.id }, body: { paused: true } });
    expect(paused.status).toBe(200);
    expect(paused.json).toMatchObject({ paused: true, next_run_at: null, formats: ["pdf", "png"] });

    const renamed = await call(scheduleRoute.PATCH, "PATCH", { token: admin, params: { id: made.json.id }, body: { name: "Monday sales", cron: "30 7 * * *" } });
    expect(renamed.json).toMatchObject({ name: "Monday sales", cron: "30 7 * * *", paused: true });

    expect((await call(scheduleRoute.DELETE, "DELETE", { token: admin, params: { id: made.json.id } })).status).toBe(204);
    expect((await call(scheduleRoute.GET, "GET", { token: admin, params: { id: made.json.id } })).status).toBe(404);
  });

  it("a deactivated owner's schedule keeps running and keeps naming them, marked deactivated", async () => {
    const leaver = await tokenForMember("acme", "general_manager", "usr_acme_gm_leaver");
    const made = await create(leaver, { ...base(), user_ids: ["usr_acme_gm_leaver"] });
    expect(made.status, made.text).toBe(201);
    expect(made.json.owner).toEqual({ id: "usr_acme_gm_leaver", name: expect.any(String), status: "active" });
    const deactivated = await call(memberRoute.PATCH, "PATCH", { token: admin, params: { id: "usr_acme_gm_leaver" }, body: { status: "deactivated" } });
    expect(deactivated.status, deactivated.text).toBe(200);
    const kept = await call(scheduleRoute.GET, "GET", { token: admin, params: { id: made.json.id } });
    expect(kept.json).toMatchObject({ paused: false, owner: { id: "usr_acme_gm_leaver", name: made.json.owner.name, status: "deactivated" } });
    expect(kept.json.next_run_at).not.toBeNull();
    expect((await call(scheduleRoute.DELETE, "DELETE", { token: admin, params: { id: made.json.id } })).status).toBe(204);
  });

  it("answers 422 with the field for a bad cron, an unknown filter, a bad filter value, an unknown zone, tab or user", async () => {
    const problems = async (body: object) => {
      const res = await create(admin, { ...base(), ...body });
      expect(res.status).toBe(422);
      return res.json.detail.map((d: { loc: unknown[]; type: string }) => [d.loc.join("."), d.type]);
    };
    expect(await problems({ cron: "61 8 * * 1" })).toEqual([["body.cron", "cron"]]);
    expect(await problems({ cron: "0 8 * *" })).toEqual([["body.cron", "cron"]]);
    expect(await problems({ filters: { region: "East" } })).toEqual([["body.filters.region", "unknown_filter"]]);
    expect(await problems({ filters: { date: "next blue moon" } })).toEqual([["body.filters.date", "bad_filter_value"]]);
    expect(await problems({ time_zone: "Mars/Olympus" })).toContainEqual(["body.time_zone", "time_zone"]);
    // The name goes into each e-mail's Subject header: a line break there would start a header of its own (issue 41).
    for (const name of ["Weekly\r\nBcc: all@example.com", "Weekly\nsales", "Weekly\u0000sales", "Weekly\u2028sales"]) {
      expect(await problems({ name }), JSON.stringify(name)).toEqual([["body.name", "custom"]]);
    }
    expect(await problems({ tab: "nowhere" })).toEqual([["body.tab", "unknown_tab"]]);
    expect(await problems({ user_ids: ["usr_globex_admin"] })).toEqual([["body.user_ids.0", "unknown_user"]]);
    expect(await problems({ user_ids: [], addresses: [] })).toEqual([["body.user_ids", "missing"]]);
    const schema = await create(admin, { ...base(), formats: ["pdf", "pdf"], channels: ["fax"] });
    expect(schema.status).toBe(422);
  });

  it("sends addresses outside the organization's users only to its allowed domains", async () => {
    const refused = await create(admin, { ...base(), addresses: ["Partner@Example.com"] });
    expect(refused.status).toBe(422);
    expect(refused.json.detail[0]).toMatchObject({ loc: ["body", "addresses", 0], type: "domain_not_allowed" });
    const settings = await call(settingsRoute.GET, "GET", { token: admin });
    const put = await call(settingsRoute.PUT, "PUT", { token: admin, body: { image_origins: settings.json.image_origins, report_allowed_domains: ["Example.com"] } });
    expect(put.status).toBe(200);
    expect(put.json.report_allowed_domains).toEqual(["example.com"]);
    // An address of a user is that user: they get their own scope, not the shared one.
    const made = await create(admin, { ...base(), user_ids: [], addresses: ["partner@example.com", "ANALYST@acme.test"] });
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({ addresses: ["partner@example.com"], user_ids: ["usr_acme_analyst"] });
    // Omitted, the domains are kept.
    const again = await call(settingsRoute.PUT, "PUT", { token: admin, body: { image_origins: settings.json.image_origins } });
    expect(again.json.report_allowed_domains).toEqual(["example.com"]);
  });

  it("refuses an unpublished dashboard (409) and an unknown one (404)", async () => {
    const draft = await call(dashboardsRoute.POST, "POST", { token: admin, body: { name: "Draft only", slug: "draft-only-report", spec_yaml: SCHEDULE_TEST_MANIFEST } });
    expect((await create(admin, { ...base(), dashboard_id: draft.json.id })).status).toBe(409);
    expect((await create(admin, { ...base(), dashboard_id: "dsh_nope" })).status).toBe(404);
  });
});

describe("report schedules: email groups", () => {
  it("lists the organization's email groups to editors (names and sizes), none of another organization's, and refuses analysts", async () => {
    for (const token of [admin, gm]) {
      const res = await call(emailGroupsRoute.GET, "GET", { token });
      expect(res.status).toBe(200);
      expect(res.json.items).toContainEqual(expect.objectContaining({ id: "ngs_acme_report_group", group_name: "acme leads", rule_key: "reports.groups", member_count: 2 }));
      expect(JSON.stringify(res.json)).not.toContain("a@example.com");
      expect(JSON.stringify(res.json)).not.toContain("globex");
    }
    const theirs = await call(emailGroupsRoute.GET, "GET", { token: globex });
    expect(theirs.json.items.map((g: { id: string }) => g.id)).toEqual(["ngs_globex_report_group"]);
    expect((await call(emailGroupsRoute.GET, "GET", { token: analyst })).status).toBe(403);
  });

  it("keeps a schedule's groups by id; another organization's group is refused (422), as is a group without e-mail", async () => {
    const made = await create(admin, { ...base(), user_ids: [], group_ids: ["ngs_acme_report_group"] });
    expect(made.status).toBe(201);
    expect(made.json.group_ids).toEqual(["ngs_acme_report_group"]);
    const theirs = await create(admin, { ...base(), group_ids: ["ngs_globex_report_group"] });
    expect(theirs.status).toBe(422);
    expect(theirs.json.detail).toEqual([expect.objectContaining({ loc: ["body", "group_ids", 0], type: "unknown_group" })]);
    const edited = await call(scheduleRoute.PATCH, "PATCH", { token: admin, params: { id: made.json.id }, body: { group_ids: ["ngs_globex_report_group"] } });
    expect(edited.status).toBe(422);
    const noMail = await create(admin, { ...base(), channels: ["slack"], user_ids: [], group_ids: ["ngs_acme_report_group"] });
    expect(noMail.status).toBe(422);
    expect(noMail.json.detail).toEqual([expect.objectContaining({ loc: ["body", "channels"] })]);
  });

  it("resets the admin's approval when an editor changes the groups (their outside members get the shared scope)", async () => {
    const made = await create(gm, base());
    await call(scheduleRoute.PATCH, "PATCH", { token: admin, params: { id: made.json.id }, body: { shared_approved: true } });
    const grouped = await call(scheduleRoute.PATCH, "PATCH", { token: gm, params: { id: made.json.id }, body: { group_ids: ["ngs_acme_report_group"] } });
    expect(grouped.status).toBe(200);
    expect(grouped.json).toMatchObject({ group_ids: ["ngs_acme_report_group"], shared_approved: false });
  });
});

describe("report schedules: who may do what", () => {
  it("lets only an admin approve the shared scope, and an editor's change of its audience resets the approval", async () => {
    expect((await create(gm, { ...base(), shared_approved: true })).status).toBe(403);
    const made = await create(gm, { ...base(), channels: ["email", "slack"] });
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({ shared_role: "general_manager", shared_location_ids: [...GM_SCOPE].sort(), shared_approved: false });
    const approved = await call(scheduleRoute.PATCH, "PATCH", { token: admin, params: { id: made.json.id }, body: { shared_approved: true } });
    expect(approved.json).toMatchObject({ shared_approved: true, shared_approved_by: "usr_acme_admin" });
    const renamed = await call(scheduleRoute.PATCH, "PATCH", { token: gm, params: { id: made.json.id }, body: { name: "Renamed" } });
    expect(renamed.json.shared_approved).toBe(true);
    const widened = await call(scheduleRoute.PATCH, "PATCH", { token: gm, params: { id: made.json.id }, body: { channels: ["email", "slack", "webhook"] } });
    expect(widened.json.shared_approved).toBe(false);
  });

  it("resets the approval on any change of what outside recipients receive, and holds it for one published version (issue 41)", async () => {
    const other = await call(dashboardsRoute.POST, "POST", { token: admin, body: { name: "Versioned sales", slug: "versioned-sales", spec_yaml: SCHEDULE_TEST_MANIFEST } });
    const publish = async () => (await call(publishRoute.POST, "POST", { token: admin, params: { id: other.json.id } })).json.published_version as number;
    const v1 = await publish();
    const made = await create(gm, { ...base(), dashboard_id: other.json.id, channels: ["email", "slack"] });
    expect(made.json).toMatchObject({ shared_approved: false, shared_status: "waiting_for_approval", shared_approved_version: null });
    const id = made.json.id as string;
    const approve = () => call(scheduleRoute.PATCH, "PATCH", { token: admin, params: { id }, body: { shared_approved: true } });
    const edit = (body: object) => call(scheduleRoute.PATCH, "PATCH", { token: gm, params: { id }, body });
    for (const change of [{ tab: "main" }, { formats: ["pdf", "png"] }, { width: 1200 }, { paper: "letter" }, { orientation: "landscape" }, { filters: { date: "2025-06-01 to 2025-07-01" } }]) {
      expect((await approve()).json).toMatchObject({ shared_approved: true, shared_status: "approved", shared_approved_version: v1 });
      const changed = await edit(change);
      expect(changed.status).toBe(200);
      expect(changed.json, JSON.stringify(change)).toMatchObject({ ...change, shared_approved: false, shared_status: "waiting_for_approval", shared_approved_by: null });
    }
    // What they receive written again as it is, a new name or time: the approval stands.
    await approve();
    const same = await edit({ filters: { date: "2025-06-01 to 2025-07-01" }, formats: ["png", "pdf"], name: "Renamed", cron: "0 9 * * 1" });
    expect(same.json).toMatchObject({ shared_approved: true, shared_status: "approved" });

    // A newer published version waits for a new approval; the approval says which version it was for.
    const v2 = await publish();
    expect(v2).toBe(v1 + 1);
    expect((await call(scheduleRoute.GET, "GET", { token: gm, params: { id } })).json).toMatchObject({ shared_approved: false, shared_status: "waiting_for_reapproval", shared_approved_version: v1, shared_approved_by: "usr_acme_admin" });
    expect((await approve()).json).toMatchObject({ shared_approved: true, shared_status: "approved", shared_approved_version: v2 });
  });

  it("keeps a location-scoped editor within their scope: no wider shared scope, no schedule of a wider one", async () => {
    const wider = await create(gm, { ...base(), shared_location_ids: ["loc_acme_nyc", "loc_acme_sfo"] });
    expect(wider.status).toBe(403);
    const narrower = await create(gm, { ...base(), shared_location_ids: ["loc_acme_nyc"] });
    expect(narrower.status).toBe(201);
    const adminsAll = await create(admin, base());
    expect(adminsAll.status).toBe(201);
    const seen = await call(schedulesRoute.GET, "GET", { token: gm });
    const ids = seen.json.items.map((s: { id: string }) => s.id);
    expect(ids).toContain(narrower.json.id);
    expect(ids).not.toContain(adminsAll.json.id);
    expect(seen.json.items.every((s: { shared_location_ids: string[] }) => s.shared_location_ids.length > 0 && s.shared_location_ids.every((l) => GM_SCOPE.includes(l)))).toBe(true);
    for (const [handler, method] of [
      [scheduleRoute.GET, "GET"],
      [scheduleRoute.PATCH, "PATCH"],
      [scheduleRoute.DELETE, "DELETE"],
      [sendRoute.POST, "POST"],
    ] as const) {
      const res = await call(handler, method, { token: gm, params: { id: adminsAll.json.id }, body: method === "PATCH" ? { name: "mine now" } : undefined });
      expect(res.status).toBe(404);
    }
  });

  it("refuses analysts (403) and shows another organization nothing", async () => {
    expect((await create(analyst, base())).status).toBe(403);
    expect((await call(schedulesRoute.GET, "GET", { token: analyst })).status).toBe(403);
    const mine = await create(admin, base());
    const list = await call(schedulesRoute.GET, "GET", { token: globex });
    expect(list.status).toBe(200);
    expect(list.json).toMatchObject({ items: [], total: 0 });
    for (const [handler, method] of [
      [scheduleRoute.GET, "GET"],
      [scheduleRoute.PATCH, "PATCH"],
      [scheduleRoute.DELETE, "DELETE"],
      [sendRoute.POST, "POST"],
    ] as const) {
      const res = await call(handler, method, { token: globex, params: { id: mine.json.id }, body: method === "PATCH" ? { name: "ours now" } : undefined });
      expect(res.status).toBe(404);
    }
    // Nor can it schedule acme's dashboard.
    expect((await create(globex, { ...base(), user_ids: ["usr_globex_admin"] })).status).toBe(404);
  });
});
