import "server-only";
import type { Principal } from "@/lib/access/roles";
import { withTenant } from "@/lib/db/tenant";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";

/** Locations of the caller's organization within the caller's location scope (enforced by RLS), by code. */
export async function listLocations(principal: Principal, page: PageQuery) {
  const [rows, total] = await withTenant(principal, (tx) =>
    Promise.all([tx.location.findMany({ orderBy: [{ code: "asc" }, { id: "asc" }], ...pageWindow(page) }), tx.location.count()]),
  );
  const items = rows.map((l) => ({ id: l.id, code: l.code, name: l.name, city: l.city, region: l.region, created_at: l.createdAt }));
  return pageBody(items, total, page);
}
