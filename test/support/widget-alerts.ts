import type { Principal } from "@/lib/access/roles";
import { getDb } from "@/lib/db/client";

// A small published dashboard for widget-alert tests: orders in all (a KPI) and per location (a table) under a date
// filter, viewable by every role.
export const ALERT_TEST_MANIFEST = `version: "1.0"
kind: dashboard
metadata: { id: alerted-sales, name: Alerted sales }
spec:
  datasets:
    - id: sales
      from: orders
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: location_id, column: orders.location_id }
      metrics:
        - { id: orders, type: sql, expression: count(*) }
        - { id: revenue, type: sql, expression: sum(orders.amount) }
  tabs:
    - id: main
      name: Main
      widgets: [date, orders_total, by_location]
---
version: "1.0"
kind: widget
metadata: { id: date, name: Order date }
spec:
  component: filter
  layout: { x: 0, y: 0, w: 4, h: 1 }
  display:
    filter: { control: date, label: Order date, default: last month }
  bindings:
    - { target: "*", field: order_date, operator: date }
---
version: "1.0"
kind: widget
metadata: { id: orders_total, name: Orders in all }
spec:
  component: kpi
  layout: { x: 0, y: 1, w: 4, h: 2 }
  data: { kind: dataset, dataset: sales, columns: [orders], mappings: { value: orders } }
---
version: "1.0"
kind: widget
metadata: { id: by_location, name: Orders by location }
spec:
  component: table
  layout: { x: 0, y: 3, w: 12, h: 4 }
  data: { kind: dataset, dataset: sales, columns: [location_id, orders, revenue] }
`;

export const EAST = ["loc_acme_bos", "loc_acme_chi", "loc_acme_nyc"];
export const WEST = ["loc_acme_aus", "loc_acme_sfo"];

export const principalOf = (userId: string, role: Principal["role"], locationIds: string[] | null, org: "acme" | "globex" = "acme"): Principal => ({
  userId,
  orgId: `org_${org}`,
  orgSlug: org,
  orgName: org === "acme" ? "Acme" : "Globex",
  role,
  locationIds,
  via: "bearer",
});

/** Adds acme managers of `locations` (copies of the seeded one), for per-recipient scopes. */
export async function addManagers(managers: readonly (readonly [id: string, email: string, locations: readonly string[]])[]) {
  const { system } = await getDb();
  for (const [id, email, locations] of managers) {
    await system.query(
      `INSERT INTO users (id, org_id, email, email_key, name, role, location_ids, password_hash)
       SELECT $1, org_id, $2, $2, 'Alerted GM', role, $3, password_hash FROM users WHERE id = 'usr_acme_general_manager' ON CONFLICT (id) DO NOTHING`,
      [id, email, locations],
    );
  }
}

/** Orders of acme in [from, to) (calendar days), in `locations` (all when empty): the figure computed by hand, beside the engine. */
export async function ordersBetween(from: string, to: string, locations: readonly string[] = []): Promise<number> {
  const { system } = await getDb();
  const rows = await system.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM orders WHERE org_id = 'org_acme' AND order_date >= $1::date AND order_date < $2::date AND (cardinality($3::text[]) = 0 OR location_id = ANY($3::text[]))`,
    [from, to, [...locations]],
  );
  return rows[0].n;
}

/** The first day of the month `monthsBack` months before the month of acme's last order (`YYYY-MM-01`). */
export async function monthBeforeLastOrder(monthsBack: number): Promise<string> {
  const { system } = await getDb();
  const rows = await system.query<{ d: string }>(
    `SELECT to_char(date_trunc('month', max(order_date)) - make_interval(months => $1::int), 'YYYY-MM-DD') AS d FROM orders WHERE org_id = 'org_acme'`,
    [monthsBack],
  );
  return rows[0].d;
}

/** The first day of the month after `day`'s (`YYYY-MM-01`). */
export function nextMonth(day: string): string {
  const [y, m] = day.split("-").map(Number);
  return new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);
}

/** The first day of the month before `day`'s (`YYYY-MM-01`). */
export function previousMonth(day: string): string {
  const [y, m] = day.split("-").map(Number);
  return new Date(Date.UTC(y, m - 2, 1)).toISOString().slice(0, 10);
}

/** The last day of `day`'s month. */
export function lastOfMonth(day: string): string {
  const [y, m] = day.split("-").map(Number);
  return new Date(Date.UTC(y, m, 0)).toISOString().slice(0, 10);
}
