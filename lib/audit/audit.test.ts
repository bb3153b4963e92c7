import crypto from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import * as auditRoute from "@/app/api/v1/audit/route";
import * as auditCsvRoute from "@/app/api/v1/audit.csv/route";
import * as apiKeysRoute from "@/app/api/v1/api-keys/route";
import * as apiKeyRoute from "@/app/api/v1/api-keys/[id]/route";
import * as dashboardsRoute from "@/app/api/v1/custom-dashboards/route";
import * as dashboardRoute from "@/app/api/v1/custom-dashboards/[id]/route";
import * as publishRoute from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as embedRoute from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import * as embedOneRoute from "@/app/api/v1/custom-dashboards/[id]/embeds/[embed_id]/route";
import * as restoreRoute from "@/app/api/v1/custom-dashboards/[id]/versions/[version]/restore/route";
import * as locationsRoute from "@/app/api/v1/locations/route";
import * as locationRoute from "@/app/api/v1/locations/[id]/route";
import * as memberRoute from "@/app/api/v1/members/[id]/route";
import * as memberResetRoute from "@/app/api/v1/members/[id]/password-reset/route";
import * as invitationsRoute from "@/app/api/v1/members/invitations/route";
import * as invitationRoute from "@/app/api/v1/members/invitations/[id]/route";
import * as acceptRoute from "@/app/api/v1/invitations/accept/route";
import * as channelRoute from "@/app/api/v1/notifications/admin/channel-configs/[kind]/route";
import * as rulesRoute from "@/app/api/v1/notifications/admin/custom-rules/route";
import * as ruleRoute from "@/app/api/v1/notifications/admin/custom-rules/[id]/route";
import * as groupsRoute from "@/app/api/v1/notifications/admin/group-subscriptions/route";
import * as groupRoute from "@/app/api/v1/notifications/admin/group-subscriptions/[id]/route";
import * as quietRoute from "@/app/api/v1/notifications/admin/quiet-hours/route";
import * as schedulesRoute from "@/app/api/v1/report-schedules/route";
import * as scheduleRoute from "@/app/api/v1/report-schedules/[id]/route";
import * as alertsRoute from "@/app/api/v1/alerts/route";
import * as alertRoute from "@/app/api/v1/alerts/[id]/route";
import * as settingsRoute from "@/app/api/v1/organization/settings/route";
import * as ownSessionsRoute from "@/app/api/v1/me/sessions/route";
import * as userSessionsRoute from "@/app/api/v1/users/[id]/sessions/route";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { PEER_HEADER, PEER_KEY_HEADER } from "@/lib/security/client-address";
import { call, tokenFor } from "@/test/helpers";
import { SCHEDULE_TEST_MANIFEST } from "@/test/support/report-schedules";
import { ALERT_TEST_MANIFEST } from "@/test/support/widget-alerts";
import type { Principal } from "@/lib/access/roles";
import { recordAudit } from "./record";
import { MASKED } from "./mask";
import { removeExpiredAuditRows } from "./retention";

// The channel case stores an SMTP host on this machine, which the outbound guard allows only when listed.
process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ url_allow_list: ["127.0.0.1"], in_process_worker: false });

// Our server stamps the socket's address on each request (lib/security/client-address.ts): the audit rows must name it.
const PEER_KEY = "audit-test-peer-key-0123456789abcdef";
(globalThis as Record<symbol, unknown>)[Symbol.for("quarry.peerKey")] = PEER_KEY;
const ADDRESS = "203.0.113.77";
const FROM = { [PEER_HEADER]: ADDRESS, [PEER_KEY_HEADER]: PEER_KEY };

let admin: string, globex: string, scopedAdmin: string, analyst: string;
const acmeAdmin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };

beforeAll(async () => {
  [admin, globex, scopedAdmin, analyst] = await Promise.all([
    tokenFor("acme", "admin"),
    tokenFor("globex", "admin"),
    tokenFor("acme", "admin", { locationIds: ["loc_acme_nyc"] }),
    tokenFor("acme", "analyst"),
  ]);
});

type Handler = Parameters<typeof call>[0];
const as = (handler: Handler, method: string, options: { body?: unknown; params?: Record<string, string>; token?: string } = {}) =>
  call(handler, method, { token: admin, headers: FROM, ...options });
const unique = (what: string) => `${what}-${crypto.randomBytes(4).toString("hex")}`;

interface Row {
  actor_kind: string;
  actor_id: string | null;
  actor_name: string | null;
  address: string | null;
  target_kind: string;
  target_name: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** The audit rows of one action on one target, read as the table's owner (under no tenant). */
async function rowsOf(action: string, targetId: string | null): Promise<Row[]> {
  const { system } = await getDb();
  return system.query<Row>("SELECT * FROM audit_events WHERE action = $1 AND target_id IS NOT DISTINCT FROM $2 ORDER BY occurred_at", [action, targetId]);
}

/** Exactly one row of `action` on `targetId`, by acme's admin from ADDRESS. */
async function oneRow(action: string, targetId: string | null): Promise<Row> {
  const rows = await rowsOf(action, targetId);
  expect(rows, `${action} ${targetId}`).toHaveLength(1);
  expect(rows[0]).toMatchObject({ actor_kind: "user", actor_id: "usr_acme_admin", address: ADDRESS, target_kind: action.split(".")[0] });
  expect(rows[0].actor_name).toBeTruthy();
  return rows[0];
}

describe("every wired change writes one audit row with before and after", () => {
  it("locations: create and update", async () => {
    const code = unique("L").slice(0, 10);
    const made = await as(locationsRoute.POST, "POST", { body: { code, name: "Audit town" } });
    expect(made.status, made.text).toBe(201);
    expect((await oneRow("location.create", made.json.id)).after).toMatchObject({ code, name: "Audit town" });
    const renamed = await as(locationRoute.PATCH, "PATCH", { params: { id: made.json.id }, body: { name: "Audit city", archived: true } });
    expect(renamed.status, renamed.text).toBe(200);
    const row = await oneRow("location.update", made.json.id);
    expect(row.before).toMatchObject({ name: "Audit town", archived_at: null });
    expect(row.after).toMatchObject({ name: "Audit city" });
    expect(row.after?.archived_at).not.toBeNull();
  });

  it("invitations and members: invite (its link masked), revoke, accept, change role, reset link", async () => {
    const email = `${unique("audited")}@example.test`;
    const made = await as(invitationsRoute.POST, "POST", { body: { email, role: "analyst", location_ids: [] } });
    expect(made.status, made.text).toBe(201);
    const invited = await oneRow("invitation.create", made.json.id);
    expect(invited.after).toMatchObject({ email, role: "analyst", status: "pending" });
    const token = made.json.link.split("/").pop();
    const { system } = await getDb();
    expect(JSON.stringify(await system.query("SELECT * FROM audit_events"))).not.toContain(token);

    const accepted = await call(acceptRoute.POST, "POST", { body: { token, name: "Audited Member", password: "correct horse battery" }, headers: { [PEER_HEADER]: "198.51.100.201", [PEER_KEY_HEADER]: PEER_KEY } });
    expect(accepted.status, accepted.text).toBe(201);
    const [acceptRow] = await rowsOf("invitation.accept", made.json.id);
    expect(acceptRow).toMatchObject({ actor_kind: "system", actor_name: "Audited Member", address: "198.51.100.201", target_name: email });
    const [{ id: memberId }] = await system.query<{ id: string }>("SELECT id FROM users WHERE email = $1", [email]);
    expect(acceptRow.actor_id).toBe(memberId);

    const promoted = await as(memberRoute.PATCH, "PATCH", { params: { id: memberId }, body: { role: "general_manager" } });
    expect(promoted.status, promoted.text).toBe(200);
    const change = await oneRow("member.update", memberId);
    expect(change.before).toMatchObject({ role: "analyst" });
    expect(change.after).toMatchObject({ role: "general_manager" });

    const reset = await as(memberResetRoute.POST, "POST", { params: { id: memberId } });
    expect(reset.status, reset.text).toBeLessThan(300);
    expect((await oneRow("member.password_reset", memberId)).target_name).toBe("Audited Member");

    const second = await as(invitationsRoute.POST, "POST", { body: { email: `${unique("revoked")}@example.test`, role: "analyst", location_ids: [] } });
    expect((await as(invitationRoute.DELETE, "DELETE", { params: { id: second.json.id } })).status).toBe(204);
    const revoked = await oneRow("invitation.revoke", second.json.id);
    expect(revoked.before).toMatchObject({ status: "pending" });
    expect(revoked.after).toMatchObject({ status: "revoked" });
    // Revoking again changes nothing and records nothing.
    expect((await as(invitationRoute.DELETE, "DELETE", { params: { id: second.json.id } })).status).toBe(204);
    await oneRow("invitation.revoke", second.json.id);
  });

  it("API keys: create and revoke, never the key", async () => {
    const made = await as(apiKeysRoute.POST, "POST", { body: { name: "audited key", scopes: ["dashboards:read"] } });
    expect(made.status, made.text).toBe(201);
    const created = await oneRow("api_key.create", made.json.id);
    expect(created.after).toMatchObject({ name: "audited key", scopes: ["dashboards:read"], revoked_at: null });
    expect(JSON.stringify(created)).not.toContain(made.json.key);
    expect((await as(apiKeyRoute.DELETE, "DELETE", { params: { id: made.json.id } })).status).toBe(204);
    expect((await oneRow("api_key.revoke", made.json.id)).after?.revoked_at).not.toBeNull();
  });

  it("a change made with an API key names the key", async () => {
    const made = await as(apiKeysRoute.POST, "POST", { body: { name: "publisher key", scopes: ["dashboards:write", "dashboards:publish"] } });
    const slug = unique("by-key");
    const created = await call(dashboardsRoute.POST, "POST", { token: made.json.key, headers: FROM, body: { name: "By key", slug, spec_yaml: SCHEDULE_TEST_MANIFEST } });
    expect(created.status, created.text).toBe(201);
    const [row] = await rowsOf("dashboard.create", created.json.id);
    expect(row).toMatchObject({ actor_kind: "api_key", actor_id: made.json.id, actor_name: "publisher key", address: ADDRESS });
  });

  it("dashboards through the one write path: create, edit, publish, restore, delete; embeds: create, revoke", async () => {
    const slug = unique("audited");
    const manifest = SCHEDULE_TEST_MANIFEST.replace("allow_embed: false", "allow_embed: true");
    const made = await as(dashboardsRoute.POST, "POST", { body: { name: "Audited", slug, spec_yaml: manifest } });
    expect(made.status, made.text).toBe(201);
    const id = made.json.id;
    expect((await oneRow("dashboard.create", id)).after).toMatchObject({ name: "Audited", slug, published_version: null });
    expect((await as(publishRoute.POST, "POST", { params: { id } })).status).toBe(200);
    expect((await oneRow("dashboard.publish", id)).after).toMatchObject({ published_version: 1 });
    const edited = await as(dashboardRoute.PUT, "PUT", { params: { id }, body: { name: "Audited, renamed" } });
    expect(edited.status, edited.text).toBe(200);
    const edit = await oneRow("dashboard.edit", id);
    expect(edit.before).toMatchObject({ name: "Audited" });
    expect(edit.after).toMatchObject({ name: "Audited, renamed" });
    const restored = await as(restoreRoute.POST, "POST", { params: { id, version: "1" }, body: {} });
    expect(restored.status, restored.text).toBeLessThan(300);
    expect((await oneRow("dashboard.restore", id)).after).toMatchObject({ name: "Audited", restored_from: 1 });

    const embed = await as(embedRoute.POST, "POST", { params: { id }, body: {} });
    expect(embed.status, embed.text).toBeLessThan(300);
    const embedRow = await oneRow("embed.create", embed.json.embed_id);
    expect(JSON.stringify(embedRow)).not.toContain(embed.json.token);
    expect(embedRow.after).toMatchObject({ dashboard_id: id, revoked_at: null });
    expect((await as(embedOneRoute.DELETE, "DELETE", { params: { id, embed_id: embed.json.embed_id } })).status).toBe(204);
    expect((await oneRow("embed.revoke", embed.json.embed_id)).after?.revoked_at).not.toBeNull();

    expect((await as(dashboardRoute.DELETE, "DELETE", { params: { id } })).status).toBe(204);
    const removed = await oneRow("dashboard.delete", id);
    expect(removed.before).toMatchObject({ slug });
    expect(removed.after).toBeNull();
  });

  it("channels (secrets masked), rules, quiet hours, e-mail groups", async () => {
    const secret = "s3cret-signing-key-0123456789";
    const put = await as(channelRoute.PUT, "PUT", { params: { kind: "email" }, body: { config: { host: "127.0.0.1", port: 2525, user: "mailer", password: secret, from: "audit@acme.test" } } });
    expect(put.status, put.text).toBe(200);
    const channelRows = await rowsOf("channel.update", "email");
    const channel = channelRows[channelRows.length - 1];
    expect(channel).toMatchObject({ actor_id: "usr_acme_admin", address: ADDRESS });
    expect(channel.after).toMatchObject({ config: { host: "127.0.0.1", user: "mailer", password: MASKED }, secrets_given: ["password"] });
    const { system } = await getDb();
    const everything = JSON.stringify(await system.query("SELECT * FROM audit_events"));
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(secret.slice(-4));

    const key = `audit.rule.${[...crypto.randomBytes(6)].map((b) => String.fromCharCode(97 + (b % 26))).join("")}`;
    const rule = await as(rulesRoute.POST, "POST", {
      body: { kind: "clone", key, name: "Audited rule", description: "", base_rule_key: "sales.gap_to_target", thresholds: { gap_pct: 5 }, severity: "critical", default_channels: ["in_app", "email"], cadence_cron: "*/15 * * * *" },
    });
    expect(rule.status, rule.text).toBe(201);
    expect((await oneRow("rule.create", rule.json.id)).after).toMatchObject({ key, name: "Audited rule" });
    expect((await as(ruleRoute.PATCH, "PATCH", { params: { id: rule.json.id }, body: { enabled: false } })).status).toBe(200);
    const ruleChange = await oneRow("rule.update", rule.json.id);
    expect(ruleChange.before).toMatchObject({ enabled: true });
    expect(ruleChange.after).toMatchObject({ enabled: false });

    const group = await as(groupsRoute.POST, "POST", { body: { rule_key: key, group_name: "Audited group", members: ["a@acme.test"] } });
    expect(group.status, group.text).toBe(201);
    expect((await oneRow("email_group.create", group.json.id)).after).toMatchObject({ group_name: "Audited group", members: ["a@acme.test"] });
    expect((await as(groupRoute.DELETE, "DELETE", { params: { id: group.json.id } })).status).toBe(204);
    expect((await oneRow("email_group.delete", group.json.id)).before).toMatchObject({ group_name: "Audited group" });

    const before = await rowsOf("quiet_hours.update", null);
    const quiet = await as(quietRoute.PUT, "PUT", { body: { org: { start: "22:00", end: "06:00", action: "defer" }, channels: {} } });
    expect(quiet.status, quiet.text).toBe(200);
    const after = await rowsOf("quiet_hours.update", null);
    expect(after).toHaveLength(before.length + 1);
    expect(after[after.length - 1].after).toMatchObject({ org: { start: "22:00", end: "06:00", action: "defer" } });
  });

  it("report schedules: create, update, delete", async () => {
    const dashboard = await as(dashboardsRoute.POST, "POST", { body: { name: "Scheduled audit", slug: unique("sched"), spec_yaml: SCHEDULE_TEST_MANIFEST } });
    expect((await as(publishRoute.POST, "POST", { params: { id: dashboard.json.id } })).status).toBe(200);
    const made = await as(schedulesRoute.POST, "POST", { body: { dashboard_id: dashboard.json.id, name: "Audited schedule", cron: "0 8 * * 1", time_zone: "UTC", channels: ["email"], user_ids: ["usr_acme_general_manager"] } });
    expect(made.status, made.text).toBe(201);
    expect((await oneRow("report_schedule.create", made.json.id)).after).toMatchObject({ name: "Audited schedule", cron: "0 8 * * 1" });
    expect((await as(scheduleRoute.PATCH, "PATCH", { params: { id: made.json.id }, body: { cron: "30 7 * * *" } })).status).toBe(200);
    const change = await oneRow("report_schedule.update", made.json.id);
    expect(change.before).toMatchObject({ cron: "0 8 * * 1" });
    expect(change.after).toMatchObject({ cron: "30 7 * * *" });
    expect((await as(scheduleRoute.DELETE, "DELETE", { params: { id: made.json.id } })).status).toBe(204);
    expect((await oneRow("report_schedule.delete", made.json.id)).before).toMatchObject({ name: "Audited schedule" });
  });

  it("widget alerts: create, update, delete", async () => {
    const dashboard = await as(dashboardsRoute.POST, "POST", { body: { name: "Alerted audit", slug: unique("alerted"), spec_yaml: ALERT_TEST_MANIFEST } });
    expect((await as(publishRoute.POST, "POST", { params: { id: dashboard.json.id } })).status).toBe(200);
    const body = { dashboard_id: dashboard.json.id, name: "Audited alert", widget_id: "orders_total", condition: { kind: "below", threshold: 1 }, cadence: { kind: "cron", cron: "0 8 * * *" } };
    const made = await as(alertsRoute.POST, "POST", { body });
    expect(made.status, made.text).toBe(201);
    expect((await oneRow("alert.create", made.json.id)).after).toMatchObject({ name: "Audited alert", condition: { kind: "below", threshold: 1 } });
    expect((await as(alertRoute.PATCH, "PATCH", { params: { id: made.json.id }, body: { condition: { kind: "above", threshold: 5 } } })).status).toBe(200);
    const change = await oneRow("alert.update", made.json.id);
    expect(change.before).toMatchObject({ condition: { kind: "below", threshold: 1 } });
    expect(change.after).toMatchObject({ condition: { kind: "above", threshold: 5 } });
    expect((await as(alertRoute.DELETE, "DELETE", { params: { id: made.json.id } })).status).toBe(204);
    expect((await oneRow("alert.delete", made.json.id)).before).toMatchObject({ name: "Audited alert" });
  });
});

describe("organization settings and ended sessions are recorded", () => {
  it("organization settings: before and after", async () => {
    const saved = await as(settingsRoute.PUT, "PUT", { body: { image_origins: ["https://img.example.com"], report_allowed_domains: ["partner.example"] } });
    expect(saved.status, saved.text).toBe(200);
    const row = await oneRow("organization.update", "org_acme");
    expect(row.before).toMatchObject({ image_origins: [], report_allowed_domains: [] });
    expect(row.after).toMatchObject({ image_origins: ["https://img.example.com"], report_allowed_domains: ["partner.example"] });
  });

  it("sign out everywhere, an admin ending a member's sessions, and a deactivation each record the sessions ended", async () => {
    expect((await as(ownSessionsRoute.DELETE, "DELETE")).status).toBe(204);
    expect((await oneRow("session.end", "usr_acme_admin")).after).toEqual({ sessions: "all", reason: "sign_out_everywhere" });

    expect((await as(userSessionsRoute.DELETE, "DELETE", { params: { id: "usr_acme_general_manager" } })).status).toBe(204);
    expect((await oneRow("session.end", "usr_acme_general_manager")).after).toEqual({ sessions: "all", reason: "ended_by_admin" });
    // Another organization's member is not found, and nothing is recorded.
    expect((await as(userSessionsRoute.DELETE, "DELETE", { params: { id: "usr_globex_analyst" } })).status).toBe(404);
    expect(await rowsOf("session.end", "usr_globex_analyst")).toHaveLength(0);

    expect((await as(memberRoute.PATCH, "PATCH", { params: { id: "usr_acme_analyst" }, body: { status: "deactivated" } })).status).toBe(200);
    expect((await oneRow("session.end", "usr_acme_analyst")).after).toEqual({ sessions: "all", reason: "deactivated" });
    // Reactivating ends nothing (the sessions already ended) and records no session row.
    expect((await as(memberRoute.PATCH, "PATCH", { params: { id: "usr_acme_analyst" }, body: { status: "active" } })).status).toBe(200);
    expect(await rowsOf("session.end", "usr_acme_analyst")).toHaveLength(1);
  });
});

describe("the log follows its change's transaction", () => {
  it("a change that fails leaves no row; a refused one neither", async () => {
    const { system } = await getDb();
    const count = async () => (await system.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_events WHERE org_id = 'org_acme'"))[0].n;
    const start = await count();
    // The location's code is taken: the route answers 409 before or after the write, and nothing is recorded.
    const code = unique("T").slice(0, 10);
    expect((await as(locationsRoute.POST, "POST", { body: { code, name: "Once" } })).status).toBe(201);
    const afterCreate = await count();
    expect(afterCreate).toBe(start + 1);
    expect((await as(locationsRoute.POST, "POST", { body: { code, name: "Twice" } })).status).toBe(409);
    // The last admin cannot be demoted: the change rolls back inside its transaction, and so does anything it recorded.
    const refused = await as(memberRoute.PATCH, "PATCH", { params: { id: "usr_acme_admin" }, body: { name: "Renamed", role: "analyst" } });
    expect([409, 200]).toContain(refused.status);
    if (refused.status === 409) expect(await rowsOf("member.update", "usr_acme_admin")).toHaveLength(0);
    // A rollback after recordAudit ran in the same transaction takes the row with it.
    await expect(
      withTenant(acmeAdmin, async (tx) => {
        await recordAudit(tx, { actor: acmeAdmin, action: "location.update", target: { id: "loc_rolled_back", name: "x" }, after: { name: "x" } });
        throw new Error("the change failed after recording");
      }),
    ).rejects.toThrow("the change failed");
    expect(await rowsOf("location.update", "loc_rolled_back")).toHaveLength(0);
    expect(await count()).toBe(refused.status === 409 ? afterCreate : afterCreate + 1);
  });
});

describe("append-only under row-level security", () => {
  it("the application's role can neither update nor delete nor truncate a row, even its own organization's", async () => {
    await withTenant(acmeAdmin, (tx) => recordAudit(tx, { actor: acmeAdmin, action: "location.update", target: { id: "loc_append_only", name: "kept" } }));
    for (const statement of [
      "UPDATE audit_events SET target_name = 'forged' WHERE target_id = 'loc_append_only'",
      "DELETE FROM audit_events WHERE target_id = 'loc_append_only'",
      "TRUNCATE audit_events",
    ]) {
      await expect(withTenant(acmeAdmin, (tx) => tx.$executeRawUnsafe(statement)), statement).rejects.toThrow(/permission denied|append-only/);
    }
    const [kept] = await rowsOf("location.update", "loc_append_only");
    expect(kept.target_name).toBe("kept");
  });

  it("the trigger refuses UPDATE and DELETE even to a role that was granted them, but not to the owner", async () => {
    const { system } = await getDb();
    await withTenant(acmeAdmin, (tx) => recordAudit(tx, { actor: acmeAdmin, action: "location.update", target: { id: "loc_trigger", name: "kept" } }));
    // A grant made by mistake does not open the table: the trigger stands behind the grants.
    await system.exec("GRANT UPDATE, DELETE ON audit_events TO quarry_app");
    try {
      await expect(withTenant(acmeAdmin, (tx) => tx.$executeRawUnsafe("UPDATE audit_events SET target_name = 'forged' WHERE target_id = 'loc_trigger'"))).rejects.toThrow(/append-only/);
      await expect(withTenant(acmeAdmin, (tx) => tx.$executeRawUnsafe("DELETE FROM audit_events WHERE target_id = 'loc_trigger'"))).rejects.toThrow(/append-only/);
    } finally {
      await system.exec("REVOKE UPDATE, DELETE ON audit_events FROM quarry_app");
    }
    expect((await rowsOf("location.update", "loc_trigger"))[0].target_name).toBe("kept");
  });

  it("another organization sees none of acme's rows, through the API or a tenant transaction", async () => {
    const globexAdmin: Principal = { ...acmeAdmin, userId: "usr_globex_admin", orgId: "org_globex", orgSlug: "globex" };
    const seen = await withTenant(globexAdmin, (tx) => tx.$queryRawUnsafe<{ org_id: string }[]>("SELECT org_id FROM audit_events"));
    expect(seen.every((r) => r.org_id === "org_globex")).toBe(true);
    const listed = await call(auditRoute.GET, "GET", "/api/v1/audit?limit=200", { token: globex });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.text).not.toContain("org_acme");
    expect(listed.text).not.toContain("usr_acme_");
    // Nor can a tenant write a row for another organization.
    await expect(
      withTenant(globexAdmin, (tx) => tx.$executeRawUnsafe("INSERT INTO audit_events (id, org_id, actor_kind, action, target_kind) VALUES ('aud_forged', 'org_acme', 'system', 'location.update', 'location')")),
    ).rejects.toThrow(/row-level security/);
  });
});

describe("GET /api/v1/audit and /api/v1/audit.csv", () => {
  it("filters by actor, action, target kind and dates, and pages by cursor without gaps or repeats", async () => {
    for (let i = 0; i < 5; i++) {
      await withTenant(acmeAdmin, (tx) => recordAudit(tx, { actor: acmeAdmin, action: "rule.delete", target: { id: `nrl_paged_${i}`, name: `paged ${i}` } }));
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof call>> = await call(auditRoute.GET, "GET", `/api/v1/audit?action=rule.delete&limit=2${cursor ? `&cursor=${cursor}` : ""}`, { token: admin });
      expect(page.status, page.text).toBe(200);
      expect(page.json.items.length).toBeLessThanOrEqual(2);
      for (const item of page.json.items) expect(item).toMatchObject({ action: "rule.delete", target_kind: "rule", actor_id: "usr_acme_admin" });
      seen.push(...page.json.items.map((i: { target_id: string }) => i.target_id));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(seen.filter((id) => id.startsWith("nrl_paged_")).sort()).toEqual(["nrl_paged_0", "nrl_paged_1", "nrl_paged_2", "nrl_paged_3", "nrl_paged_4"]);
    expect(new Set(seen).size).toBe(seen.length);

    const byKind = await call(auditRoute.GET, "GET", "/api/v1/audit?target_kind=location&actor=usr_acme_admin", { token: admin });
    expect(byKind.json.items.length).toBeGreaterThan(0);
    expect(byKind.json.items.every((i: { target_kind: string; actor_id: string }) => i.target_kind === "location" && i.actor_id === "usr_acme_admin")).toBe(true);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const none = await call(auditRoute.GET, "GET", `/api/v1/audit?from=${encodeURIComponent(future)}`, { token: admin });
    expect(none.json).toEqual({ items: [], next_cursor: null });
  });

  it("answers bad filters with 422 and a detail, never a 500", async () => {
    for (const query of ["action=member.fly", "target_kind=planet", "from=yesterday", "cursor=not-a-cursor", "limit=0", "from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z"]) {
      const res = await call(auditRoute.GET, "GET", `/api/v1/audit?${query}`, { token: admin });
      expect(res.status, `${query}: ${res.text}`).toBe(422);
      expect(res.json.detail).toBeTruthy();
    }
  });

  it("is for admins of every location: analysts and scoped admins get 403", async () => {
    for (const token of [analyst, scopedAdmin]) {
      expect((await call(auditRoute.GET, "GET", "/api/v1/audit", { token })).status).toBe(403);
      expect((await call(auditCsvRoute.GET, "GET", "/api/v1/audit.csv", { token })).status).toBe(403);
    }
  });

  it("exports the filtered rows as CSV, formulas neutralised", async () => {
    await withTenant(acmeAdmin, (tx) => recordAudit(tx, { actor: acmeAdmin, action: "rule.delete", target: { id: "nrl_csv", name: "=HYPERLINK(\"http://evil\")" }, before: { note: "a,b\n\"c\"" } }));
    const res = await call(auditCsvRoute.GET, "GET", "/api/v1/audit.csv?action=rule.delete", { token: admin });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(res.headers.get("content-disposition")).toMatch(/attachment; filename="audit-acme-\d{4}-\d{2}-\d{2}\.csv"/);
    const lines = res.text.replace(/^\uFEFF/, "").split("\r\n");
    expect(lines[0]).toBe("occurred_at,actor_kind,actor_id,actor_name,address,action,target_kind,target_id,target_name,before,after");
    expect(res.text).toContain(`'=HYPERLINK(""http://evil"")`);
    expect(res.text).not.toContain("location.create");
    expect(res.text).toContain("nrl_paged_4");
  });

  it("no route edits or deletes audit rows: every other method on both paths is refused", async () => {
    const { system } = await getDb();
    const before = await system.query("SELECT id, target_name, before, after FROM audit_events WHERE org_id = 'org_acme' ORDER BY id");
    const handlers = [auditRoute, auditCsvRoute] as Record<string, unknown>[];
    for (const mod of handlers) {
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) expect(mod[method], method).toBeUndefined();
    }
    // The request gate answers 405 for a method no endpoint serves at a known path (proxy.ts, lib/api/allowed-methods.ts).
    const { allowedMethods, methodNotAllowed } = await import("@/lib/api/allowed-methods");
    for (const path of ["/api/v1/audit", "/api/v1/audit.csv"]) {
      expect(allowedMethods(path)).toEqual(["GET"]);
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
        const refused = methodNotAllowed(method, path);
        expect(refused?.status, `${method} ${path}`).toBe(405);
        expect((await refused!.json()).detail).toContain("allowed: GET");
      }
    }
    expect(await system.query("SELECT id, target_name, before, after FROM audit_events WHERE org_id = 'org_acme' ORDER BY id")).toEqual(before);
  });
});

describe("retention", () => {
  it("removes only rows older than the retention, as the table's owner", async () => {
    const { system } = await getDb();
    await withTenant(acmeAdmin, (tx) => recordAudit(tx, { actor: acmeAdmin, action: "rule.delete", target: { id: "nrl_old", name: "old" } }));
    await withTenant(acmeAdmin, (tx) => recordAudit(tx, { actor: acmeAdmin, action: "rule.delete", target: { id: "nrl_recent", name: "recent" } }));
    // Age one row by 400 days and one by 10 (as the owner, the one role the trigger lets change rows).
    await system.query("UPDATE audit_events SET occurred_at = now() - interval '400 days' WHERE target_id = 'nrl_old'");
    await system.query("UPDATE audit_events SET occurred_at = now() - interval '10 days' WHERE target_id = 'nrl_recent'");
    const removed = await removeExpiredAuditRows(new Date(), 365);
    expect(removed).toBeGreaterThanOrEqual(1);
    expect(await rowsOf("rule.delete", "nrl_old")).toHaveLength(0);
    expect(await rowsOf("rule.delete", "nrl_recent")).toHaveLength(1);
    expect((await rowsOf("location.update", "loc_append_only")).length).toBe(1);
  });
});
