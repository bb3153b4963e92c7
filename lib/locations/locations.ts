import "server-only";
import type { Principal } from "@/lib/auth/roles";
import { withTenant } from "@/lib/db/tenant";

/** Locations of the caller's organization within the caller's location scope (enforced by RLS). */
export async function listLocations(principal: Principal) {
  const rows = await withTenant(principal, (tx) => tx.location.findMany({ orderBy: { code: "asc" } }));
  const items = rows.map((l) => ({ id: l.id, code: l.code, name: l.name, city: l.city, region: l.region, created_at: l.createdAt }));
  return { items, total: items.length };
}
