import "server-only";
import { recordAudit } from "@/lib/audit/record";
import { findOrganization } from "@/lib/auth/directory";
import { normalizeEmail } from "@/lib/auth/email";
import { hashPassword } from "@/lib/auth/password";
import { getDb } from "@/lib/db/client";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { conflict } from "@/lib/errors";
import { newId } from "@/lib/ids";
import type { SetupBody } from "./contract";
import { writeInvitation } from "./invitations";

const SETUP_DONE = "This install is already set up; sign in, or ask an admin of your organization for an invitation";

/** Whether the install still needs its first-run setup: it has no organization, and none was ever set up here. */
export async function isSetupOpen(): Promise<boolean> {
  const { system } = await getDb();
  const [row] = await system.query<{ open: boolean }>(
    "SELECT NOT EXISTS (SELECT 1 FROM organizations) AND NOT EXISTS (SELECT 1 FROM quarry_instance_setup) AS open",
  );
  return row?.open === true;
}

interface NewOrganization {
  id: string;
  slug: string;
  name: string;
  timeZone: string;
  currency: string;
}

/**
 * Inserts the organization as the connecting role (no tenant role may create one), in the transaction of
 * the tenant work that follows, and takes the install's one setup row: `first` insists on it (the setup
 * page: a second setup, at once or later, fails on its primary key), otherwise it is taken only if free.
 */
function createOrganization(org: NewOrganization, first: boolean) {
  return async (tx: TenantTx) => {
    if (first) {
      const [{ taken }] = await tx.$queryRaw<{ taken: boolean }[]>`SELECT EXISTS (SELECT 1 FROM organizations) AS taken`;
      if (taken) throw conflict(SETUP_DONE);
    }
    await tx.$executeRaw`INSERT INTO organizations (id, slug, name, time_zone, currency) VALUES (${org.id}, ${org.slug}, ${org.name}, ${org.timeZone}, ${org.currency})`;
    if (first) await tx.$executeRaw`INSERT INTO quarry_instance_setup (org_id) VALUES (${org.id})`;
    else await tx.$executeRaw`INSERT INTO quarry_instance_setup (org_id) VALUES (${org.id}) ON CONFLICT DO NOTHING`;
  };
}

/** A unique violation (the setup row, or the slug) as the 409 it is; anything else as it is. */
function asConflict(error: unknown, detail: string): unknown {
  const e = error as { code?: unknown; meta?: { code?: unknown }; message?: unknown };
  const unique = e?.code === "P2002" || e?.code === "23505" || e?.meta?.code === "23505" || /unique|duplicate key/i.test(String(e?.message ?? ""));
  return unique ? conflict(detail) : error;
}

/**
 * The first-run setup: the first organization and its admin (every location), in one transaction. Works
 * once: on an install that has an organization it answers 409, and of two setups at once on any replicas
 * one commits and the other fails on the setup row's primary key (409).
 */
export async function runSetup(body: SetupBody) {
  if (!(await isSetupOpen())) throw conflict(SETUP_DONE);
  const passwordHash = await hashPassword(body.admin_password);
  const org: NewOrganization = { id: newId("org"), slug: body.slug, name: body.organization_name, timeZone: body.time_zone, currency: body.currency };
  try {
    await withTenant(
      { orgId: org.id },
      async (tx) => {
        const admin = await tx.user.create({
          data: { id: newId("usr"), orgId: org.id, email: body.admin_email, emailKey: normalizeEmail(body.admin_email), name: body.admin_name, role: "admin", locationIds: [], passwordHash },
        });
        // Nobody is signed in yet: the row names the admin the setup made, as an accepted invitation names its account.
        await recordAudit(tx, {
          actor: { system: admin.id },
          action: "organization.setup",
          target: { id: org.id, name: org.name },
          after: { slug: org.slug, name: org.name, time_zone: org.timeZone, currency: org.currency, admin: { id: admin.id, email: admin.email, name: admin.name } },
        });
      },
      { prelude: createOrganization(org, true) },
    );
  } catch (error) {
    throw asConflict(error, SETUP_DONE);
  }
  return { organization: org.slug, admin_email: body.admin_email };
}

/**
 * The instance admin's command (`quarry init`): an organization and a one-time link for its first admin.
 * On an empty install it also closes the setup page. An organization of that slug that has no member yet
 * (an earlier init whose link was lost) gets a new link; one with members is refused.
 */
export async function initOrganization(
  input: { slug: string; name: string; timeZone: string; currency: string; adminEmail: string },
  /** Who asks, as the new organization's audit log names them: the command, or an instance admin by e-mail. */
  by: string,
): Promise<{ orgId: string; link: string; created: boolean }> {
  const existing = await findOrganization(input.slug);
  const invite = (orgId: string) => async (tx: TenantTx) => {
    const made = await writeInvitation(tx, orgId, { email: input.adminEmail, role: "admin", locationIds: [], createdBy: null });
    await recordAudit(tx, {
      actor: { system: by },
      action: existing ? "invitation.create" : "organization.create",
      target: existing ? { id: null, name: input.adminEmail } : { id: orgId, name: input.name },
      after: existing ? { email: input.adminEmail, role: "admin" } : { slug: input.slug, name: input.name, time_zone: input.timeZone, currency: input.currency, first_admin: input.adminEmail },
    });
    return made;
  };
  if (existing) {
    const { link } = await withTenant({ orgId: existing.id }, async (tx) => {
      if ((await tx.user.count()) > 0) throw conflict(`Organization '${input.slug}' already has members; its admins invite people from /admin/members`);
      return invite(existing.id)(tx);
    });
    return { orgId: existing.id, link, created: false };
  }
  const org: NewOrganization = { id: newId("org"), ...input };
  try {
    const { link } = await withTenant({ orgId: org.id }, invite(org.id), { prelude: createOrganization(org, false) });
    return { orgId: org.id, link, created: true };
  } catch (error) {
    throw asConflict(error, `Organization '${input.slug}' was just created by someone else`);
  }
}
