import { beforeAll, describe, expect, it } from "vitest";
import * as setupRoute from "@/app/api/v1/setup/route";
import * as acceptRoute from "@/app/api/v1/invitations/accept/route";
import { findUserForLogin } from "@/lib/auth/directory";
import { getDb } from "@/lib/db/client";
import { PEER_HEADER, PEER_KEY_HEADER } from "@/lib/security/client-address";
import { call } from "@/test/helpers";
import { initOrganization, isSetupOpen } from "./setup";

// Public endpoints are rate-limited per address: each call comes from an address of its own, as our server stamps it.
const PEER_KEY = "setup-test-peer-key-0123456789ab";
(globalThis as Record<symbol, unknown>)[Symbol.for("quarry.peerKey")] = PEER_KEY;
let peer = 0;
const fromNewPeer = () => ({ [PEER_HEADER]: `203.0.113.${++peer}`, [PEER_KEY_HEADER]: PEER_KEY });

const setupBody = (slug: string, email: string) => ({
  organization_name: `Org ${slug}`,
  slug,
  time_zone: "Europe/Berlin",
  currency: "EUR",
  admin_name: "First Admin",
  admin_email: email,
  admin_password: "a long first password",
});
const submit = (body: unknown) => call(setupRoute.POST, "POST", { body, headers: fromNewPeer() });

describe("first-run setup", () => {
  it("is closed on an install that has organizations", async () => {
    expect(await isSetupOpen()).toBe(false);
    const replay = await submit(setupBody("late", "late@example.test"));
    expect(replay.status).toBe(409);
    expect(replay.json.detail).toMatch(/already set up/);
  });

  describe("on an empty install", () => {
    beforeAll(async () => {
      // This file's own copy of the database (test/setup-file.ts) becomes a fresh install.
      const { system } = await getDb();
      await system.query("TRUNCATE organizations, quarry_instance_setup CASCADE");
    });

    it("two setups at once make one organization; the other and every later one answer 409; bad input 422 and nothing made", async () => {
      expect(await isSetupOpen()).toBe(true);
      expect((await call(setupRoute.GET, "GET", { headers: fromNewPeer() })).json).toEqual({ open: true });
      const invalid = await submit({ ...setupBody("Bad Slug", "x@example.test"), time_zone: "Mars/Olympus", currency: "euro" });
      expect(invalid.status).toBe(422);
      expect(invalid.json.detail.map((d: { loc: string[] }) => d.loc.at(-1)).sort()).toEqual(["currency", "slug", "time_zone"]);
      expect(await isSetupOpen()).toBe(true);

      const both = await Promise.all([submit(setupBody("first", "first@example.test")), submit(setupBody("second", "second@example.test"))]);
      expect(both.map((r) => r.status).sort(), JSON.stringify(both.map((r) => r.json))).toEqual([201, 409]);
      const { system } = await getDb();
      const orgs = await system.query<{ slug: string; time_zone: string; currency: string }>("SELECT slug, time_zone, currency FROM organizations");
      expect(orgs).toHaveLength(1);
      expect(orgs[0]).toMatchObject({ time_zone: "Europe/Berlin", currency: "EUR" });
      const winner = both.find((r) => r.status === 201)!.json;
      expect(orgs[0].slug).toBe(winner.organization);
      const admin = (await findUserForLogin(winner.admin_email))!;
      expect(admin).toMatchObject({ role: "admin", locationIds: [], org: { slug: winner.organization } });
      expect(await system.query("SELECT 1 FROM users")).toHaveLength(1);
      // The setup is the organization's first audit row, named after the admin it made.
      const audit = await system.query<{ actor_kind: string; actor_id: string; actor_name: string; action: string; after: { slug: string } }>(
        "SELECT actor_kind, actor_id, actor_name, action, after FROM audit_events",
      );
      expect(audit).toEqual([expect.objectContaining({ actor_kind: "system", actor_id: admin.id, actor_name: "First Admin", action: "organization.setup", after: expect.objectContaining({ slug: winner.organization }) })]);

      expect(await isSetupOpen()).toBe(false);
      expect((await call(setupRoute.GET, "GET", { headers: fromNewPeer() })).json).toEqual({ open: false });
      expect((await submit(setupBody("third", "third@example.test"))).status).toBe(409);
      expect(await system.query("SELECT 1 FROM organizations")).toHaveLength(1);
    });

    it("the instance's command makes another organization with a one-time link for its first admin; never over one with members", async () => {
      const made = await initOrganization({ slug: "branch", name: "Branch", timeZone: "UTC", currency: "USD", adminEmail: "boss@branch.test" }, "command: quarry init");
      expect(made.created).toBe(true);
      const token = made.link.split("/").pop()!;
      const again = await initOrganization({ slug: "branch", name: "Branch", timeZone: "UTC", currency: "USD", adminEmail: "boss@branch.test" }, "command: quarry init");
      expect(again.created).toBe(false);
      // The new link replaced the first.
      expect((await call(acceptRoute.POST, "POST", { body: { token, name: "Boss", password: "a long boss password" }, headers: fromNewPeer() })).status).toBe(410);
      const accepted = await call(acceptRoute.POST, "POST", { body: { token: again.link.split("/").pop(), name: "Boss", password: "a long boss password" }, headers: fromNewPeer() });
      expect(accepted.status, accepted.text).toBe(201);
      expect(await findUserForLogin("boss@branch.test")).toMatchObject({ role: "admin", org: { slug: "branch" } });
      await expect(initOrganization({ slug: "branch", name: "Branch", timeZone: "UTC", currency: "USD", adminEmail: "other@branch.test" }, "command: quarry init")).rejects.toThrow(/already has members/);
      // The new organization's audit log says who made it and who sent its admin a second link.
      const { system } = await getDb();
      const audit = await system.query<{ action: string; actor_kind: string; actor_id: string }>(
        "SELECT action, actor_kind, actor_id FROM audit_events WHERE org_id = $1 AND action IN ('organization.create', 'invitation.create') ORDER BY occurred_at, id",
        [made.orgId],
      );
      expect(audit).toEqual([
        { action: "organization.create", actor_kind: "system", actor_id: "command: quarry init" },
        { action: "invitation.create", actor_kind: "system", actor_id: "command: quarry init" },
      ]);
      expect((await submit(setupBody("fourth", "fourth@example.test"))).status).toBe(409);
    });
  });
});
