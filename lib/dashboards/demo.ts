import "server-only";
import { invoke } from "@/lib/operation";
import { findOrganization } from "@/lib/auth/directory";
import type { Principal } from "@/lib/access/roles";
import { DEMO_ORGS } from "@/lib/demo/seed";
import { withTenant } from "@/lib/db/tenant";
import { seedDashboards } from "./operations";

/**
 * Demo start: every demo organization that has no dashboard yet gets the bundled sample,
 * published, as if its admin had pressed "Load sample". Organizations that already have
 * dashboards (later starts, or after the sample was deleted on purpose) are left alone.
 */
export async function seedDemoDashboards(): Promise<number> {
  let seeded = 0;
  for (const demo of DEMO_ORGS) {
    const org = await findOrganization(demo.slug);
    if (!org) continue;
    const admin: Principal = { userId: `usr_${org.slug}_admin`, orgId: org.id, orgSlug: org.slug, orgName: org.name, role: "admin", locationIds: null, via: "session" };
    const existing = await withTenant(admin, (tx) => tx.dashboard.count());
    if (existing > 0) continue;
    await invoke(seedDashboards, admin);
    seeded += 1;
  }
  return seeded;
}
