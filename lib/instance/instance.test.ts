import { describe, expect, it } from "vitest";
import * as instanceOrganizations from "@/app/api/v1/instance/organizations/route";
import * as memberRoute from "@/app/api/v1/members/[id]/route";
import * as acceptRoute from "@/app/api/v1/invitations/accept/route";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { PEER_HEADER, PEER_KEY_HEADER } from "@/lib/security/client-address";
import { call, tokenFor } from "@/test/helpers";
import { grantInstanceAdmin, listInstanceAdmins, revokeInstanceAdmin } from "./admins";

// The accept endpoint is public and rate-limited per address: its call comes from an address of its own.
const PEER_KEY = "instance-test-peer-key-0123456789";
(globalThis as Record<symbol, unknown>)[Symbol.for("quarry.peerKey")] = PEER_KEY;

const newOrg = (slug: string) => ({ organization_name: `Org ${slug}`, slug, time_zone: "Europe/Lisbon", currency: "EUR", admin_email: `first@${slug}.test` });

async function emailOf(userId: string): Promise<string> {
  const { system } = await getDb();
  const [row] = await system.query<{ email: string }>("SELECT email FROM users WHERE id = $1", [userId]);
  return row.email;
}

async function instanceAdminIds(): Promise<string[]> {
  const { system } = await getDb();
  return (await system.query<{ user_id: string }>("SELECT user_id FROM quarry_instance_admins ORDER BY user_id")).map((r) => r.user_id);
}

describe("instance admins and the install's organizations", () => {
  it("refuses everyone who is not an instance admin (403), an organization's admin included, and makes nothing", async () => {
    for (const token of await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")])) {
      const list = await call(instanceOrganizations.GET, "GET", { token });
      expect(list.status, list.text).toBe(403);
      expect(list.json.detail).toMatch(/Instance admins only/);
      expect((await call(instanceOrganizations.POST, "POST", { token, body: newOrg("sneaky") })).status).toBe(403);
    }
    expect((await call(instanceOrganizations.GET, "GET")).status).toBe(401);
    const { system } = await getDb();
    expect(await system.query("SELECT 1 FROM organizations WHERE slug = 'sneaky'")).toHaveLength(0);
  });

  it("an organization's admin cannot make themselves an instance admin: not through the API, not with the database role they act in", async () => {
    const token = await tokenFor("acme", "admin");
    const patch = await call(memberRoute.PATCH, "PATCH", { token, params: { id: "usr_acme_admin" }, body: { instance_admin: true } });
    expect(patch.status, patch.text).toBe(422);
    // The tenant role (quarry_app) holds no grant on the table: writing and even reading it fail.
    await expect(withTenant({ orgId: "org_acme" }, (tx) => tx.$executeRaw`INSERT INTO quarry_instance_admins (user_id) VALUES ('usr_acme_admin')`)).rejects.toThrow(/permission denied/);
    await expect(withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRaw`SELECT user_id FROM quarry_instance_admins`)).rejects.toThrow(/permission denied/);
    expect(await instanceAdminIds()).toEqual([]);
    expect((await call(instanceOrganizations.GET, "GET", { token })).status).toBe(403);
  });

  it("the command line grants it; the instance admin lists organizations and makes one whose first admin accepts the link; revoking ends it", async () => {
    const { system } = await getDb();
    const [acme] = await system.query<{ id: string }>("SELECT id FROM organizations WHERE slug = 'acme'");
    const email = await emailOf("usr_acme_analyst");
    await grantInstanceAdmin(email.toUpperCase());
    await grantInstanceAdmin(email);
    expect((await listInstanceAdmins()).map((a) => [a.email, a.organization])).toEqual([[email, "acme"]]);
    await expect(grantInstanceAdmin("nobody@nowhere.test")).rejects.toThrow(/not found/);
    // The flag is the account's, whatever its role in its organization; an API key never carries it (keys are refused).
    const token = await tokenFor("acme", "analyst");

    const before = await call(instanceOrganizations.GET, "GET", { token });
    expect(before.status, before.text).toBe(200);
    const acmeRow = before.json.items.find((o: { slug: string }) => o.slug === "acme");
    const [{ n }] = await withTenant({ orgId: acme.id }, (tx) => tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM users`);
    expect(acmeRow).toMatchObject({ id: acme.id, members: n });
    expect(before.json.total).toBe(before.json.items.length);
    // Paged like every list: oldest first, the total across pages; bad paging is a 422.
    const second = await call(instanceOrganizations.GET, "GET", "/api/v1/instance/organizations?limit=1&offset=1", { token });
    expect(second.json).toMatchObject({ total: before.json.total, limit: 1, offset: 1, items: [before.json.items[1]] });
    expect((await call(instanceOrganizations.GET, "GET", "/api/v1/instance/organizations?limit=0", { token })).status).toBe(422);

    const invalid = await call(instanceOrganizations.POST, "POST", { token, body: { ...newOrg("Bad Slug"), admin_email: "first@bad.test", currency: "euro" } });
    expect(invalid.status).toBe(422);
    expect(invalid.json.detail.map((d: { loc: string[] }) => d.loc.at(-1)).sort()).toEqual(["currency", "slug"]);

    const made = await call(instanceOrganizations.POST, "POST", { token, body: newOrg("branch-two") });
    expect(made.status, made.text).toBe(201);
    expect(made.json).toMatchObject({ created: true, admin_email: "first@branch-two.test", organization: { slug: "branch-two", name: "Org branch-two", time_zone: "Europe/Lisbon", currency: "EUR", members: 0 } });
    const accepted = await call(acceptRoute.POST, "POST", {
      body: { token: made.json.link.split("/").pop(), name: "First", password: "a long first password" },
      headers: { [PEER_HEADER]: "203.0.113.77", [PEER_KEY_HEADER]: PEER_KEY },
    });
    expect(accepted.status, accepted.text).toBe(201);
    const after = await call(instanceOrganizations.GET, "GET", { token, headers: {} });
    expect(after.json.items.find((o: { slug: string }) => o.slug === "branch-two")).toMatchObject({ members: 1 });
    expect(after.json.total).toBe(before.json.total + 1);
    const [firstAdmin] = await system.query<{ role: string; location_ids: string[] }>("SELECT role, location_ids FROM users WHERE email_key = 'first@branch-two.test'");
    expect(firstAdmin).toEqual({ role: "admin", location_ids: [] });
    // An organization that has members is never taken over by making it again.
    expect((await call(instanceOrganizations.POST, "POST", { token, body: newOrg("branch-two") })).status).toBe(409);

    expect(await revokeInstanceAdmin(email)).toBe(true);
    expect(await revokeInstanceAdmin(email)).toBe(false);
    expect((await call(instanceOrganizations.GET, "GET", { token })).status).toBe(403);
  });
});
