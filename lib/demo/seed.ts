import crypto from "node:crypto";
import type { SqlRunner } from "@/lib/db/sql";
import { normalizeEmail } from "@/lib/auth/email";
import { hashPassword } from "@/lib/auth/password";

/** Password of every demo user; shown on the sign-in page in embedded mode. */
export const DEMO_PASSWORD = "quarry-demo";

/** Whole months of orders before the current one: the warehouse starts on the first day of the month this many months back. */
const WAREHOUSE_MONTHS_BEFORE = 23;

/**
 * The first and last day of an organization's demo warehouse seeded at `now`: from the first day of
 * the month 23 months back to today in the organization's zone (about two years; 2024-12-01 ..
 * 2026-11-26 when seeded on 2026-11-26). No order is ever dated after the day of seeding, so a
 * dashboard's "this month" is never padded with the future, and a warehouse seeded on the same day
 * holds the same rows: every order is drawn from the day's position in the window by a fixed hash.
 */
export function warehouseWindow(now: Date, timeZone: string): { from: string; to: string } {
  // en-CA writes dates as YYYY-MM-DD.
  const to = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(now);
  const [year, month] = to.split("-").map(Number);
  const first = new Date(Date.UTC(year, month - 1 - WAREHOUSE_MONTHS_BEFORE, 1));
  return { from: first.toISOString().slice(0, 10), to };
}

interface DemoOrg {
  slug: string;
  name: string;
  timeZone: string;
  ordersPerDay: number;
  locations: { code: string; name: string; city: string; region: string }[];
}

export const DEMO_ORGS: DemoOrg[] = [
  {
    slug: "acme",
    name: "Acme Retail",
    timeZone: "America/New_York",
    ordersPerDay: 85,
    locations: [
      { code: "NYC", name: "Manhattan Flagship", city: "New York", region: "East" },
      { code: "BOS", name: "Boston Back Bay", city: "Boston", region: "East" },
      { code: "CHI", name: "Chicago Loop", city: "Chicago", region: "Central" },
      { code: "AUS", name: "Austin South Congress", city: "Austin", region: "Central" },
      { code: "SFO", name: "San Francisco Union Sq", city: "San Francisco", region: "West" },
    ],
  },
  {
    slug: "globex",
    name: "Globex Foods",
    timeZone: "Europe/Berlin",
    ordersPerDay: 60,
    locations: [
      { code: "BER", name: "Berlin Mitte", city: "Berlin", region: "North" },
      { code: "HAM", name: "Hamburg Hafen", city: "Hamburg", region: "North" },
      { code: "MUC", name: "Munich Altstadt", city: "Munich", region: "South" },
      { code: "VIE", name: "Vienna Ring", city: "Vienna", region: "South" },
    ],
  },
];

const PRODUCTS = [
  ["Espresso Machine", "Appliances", 349],
  ["Pour-over Kettle", "Appliances", 79],
  ["Burr Grinder", "Appliances", 189],
  ["House Blend 1kg", "Coffee", 32],
  ["Single Origin 250g", "Coffee", 18],
  ["Decaf 500g", "Coffee", 21],
  ["Ceramic Mug", "Accessories", 14],
  ["Travel Tumbler", "Accessories", 29],
  ["Milk Frother", "Accessories", 45],
  ["Barista Course", "Services", 120],
] as const;

export const DEMO_ROLES = ["admin", "general_manager", "analyst"] as const;

export function demoEmail(orgSlug: string, role: (typeof DEMO_ROLES)[number]): string {
  const local = role === "general_manager" ? "gm" : role;
  return `${local}@${orgSlug}.test`;
}

export function locationId(orgSlug: string, code: string): string {
  return `loc_${orgSlug}_${code.toLowerCase()}`;
}

/**
 * Seeds the demo organizations, users, locations and warehouse once (skipped when
 * organizations exist). Orders come from a fixed integer hash in SQL, so every
 * machine seeding on the same day gets the same ~95k rows in a few seconds; the
 * warehouse ends on the day of seeding (`warehouseWindow`).
 */
export async function seedDemo(db: SqlRunner, now: Date = new Date()): Promise<boolean> {
  const [{ count }] = await db.query<{ count: number }>("SELECT count(*)::int AS count FROM organizations");
  if (count > 0) return false;

  await db.exec("BEGIN");
  try {
    for (const org of DEMO_ORGS) await seedOrg(db, org, warehouseWindow(now, org.timeZone));
    await db.exec("COMMIT");
  } catch (error) {
    await db.exec("ROLLBACK");
    throw error;
  }
  // Planner statistics for the fresh warehouse now: the embedded engine runs no autovacuum, and without
  // them its widest dashboard queries planned as if the tables were tiny (4x slower).
  await db.exec("ANALYZE");
  return true;
}

async function seedOrg(db: SqlRunner, org: DemoOrg, window: { from: string; to: string }) {
  const orgId = `org_${org.slug}`;
  await db.query("INSERT INTO organizations (id, slug, name, time_zone) VALUES ($1, $2, $3, $4)", [orgId, org.slug, org.name, org.timeZone]);

  for (const loc of org.locations) {
    await db.query("INSERT INTO locations (id, org_id, code, name, city, region) VALUES ($1, $2, $3, $4, $5, $6)", [
      locationId(org.slug, loc.code), orgId, loc.code, loc.name, loc.city, loc.region,
    ]);
  }

  const scopedLocations = org.locations.slice(0, 3).map((l) => locationId(org.slug, l.code));
  for (const role of DEMO_ROLES) {
    const email = demoEmail(org.slug, role);
    const displayRole = role === "general_manager" ? "General Manager" : role[0].toUpperCase() + role.slice(1);
    await db.query(
      "INSERT INTO users (id, org_id, email, email_key, name, role, location_ids, password_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
      [
        `usr_${org.slug}_${role}`, orgId, email, normalizeEmail(email), `${org.name} ${displayRole}`, role,
        // The general manager oversees the first three locations; the others see all of them.
        role === "general_manager" ? scopedLocations : [],
        await hashPassword(DEMO_PASSWORD),
      ],
    );
  }

  for (const [i, [name, category, price]] of PRODUCTS.entries()) {
    await db.query("INSERT INTO products (id, org_id, sku, name, category, unit_price, unit_cost) VALUES ($1, $2, $3, $4, $5, $6, $7)", [
      `prd_${org.slug}_${i + 1}`, orgId, `SKU-${100 + i}`, name, category, price, Math.round(price * (0.45 + (i % 4) * 0.07) * 100) / 100,
    ]);
  }

  // h(n, salt) is a fixed multiplicative hash in [0, 1): the same rows everywhere, no random().
  const locationIds = org.locations.map((l) => locationId(org.slug, l.code));
  const orgSalt = parseInt(crypto.createHash("sha256").update(org.slug).digest("hex").slice(0, 6), 16);
  await db.query(
    `WITH params AS (
       SELECT $1::text AS org_id, $2::text[] AS locs, $3::int AS per_day, $4::bigint AS salt, $5::text AS slug
     ), days AS (
       SELECT d::date AS day, row_number() OVER (ORDER BY d) - 1 AS day_no
       FROM generate_series($6::date, $7::date, interval '1 day') AS d
     ), raw AS (
       SELECT p.org_id, p.locs, p.slug, days.day, days.day_no, k,
              days.day_no * p.per_day + k AS n, p.salt
       FROM params p, days, generate_series(0, p.per_day - 1) AS k
       -- weekends are busier, and the business grows about 30% over the two years
       WHERE ((days.day_no * 7919 + k * 104729 + p.salt) % 1000) <
             (700 + 200 * (extract(isodow FROM days.day) >= 6)::int + days.day_no * 0.4)
     ), drawn AS (
       SELECT *,
              ((n * 2654435761 + salt) % 4294967296) / 4294967296.0 AS h1,
              ((n * 2246822519 + salt * 3) % 4294967296) / 4294967296.0 AS h2,
              ((n * 3266489917 + salt * 7) % 4294967296) / 4294967296.0 AS h3
       FROM raw
     )
     INSERT INTO orders (id, org_id, order_date, location_id, product_id, channel, customer_id, quantity, amount, cost)
     SELECT (CASE WHEN d.slug = 'acme' THEN 1000000000 ELSE 2000000000 END) + d.n,
            d.org_id, d.day,
            d.locs[1 + floor(power(d.h1, 1.3) * array_length(d.locs, 1))::int],
            'prd_' || d.slug || '_' || (1 + floor(d.h2 * 10)::int),
            (ARRAY['store', 'online', 'partner'])[1 + floor(d.h3 * d.h3 * 3)::int],
            1 + floor(d.h3 * 5000)::int,
            q.quantity,
            round(q.quantity * pr.unit_price * (0.9 + 0.2 * d.h1)::numeric, 2),
            round(q.quantity * pr.unit_cost, 2)
     FROM drawn d
     CROSS JOIN LATERAL (SELECT 1 + floor(d.h2 * d.h3 * 4)::int AS quantity) q
     JOIN products pr ON pr.id = 'prd_' || d.slug || '_' || (1 + floor(d.h2 * 10)::int)`,
    [orgId, locationIds, org.ordersPerDay, orgSalt, org.slug, window.from, window.to],
  );

  // Monthly targets: last year's revenue for that month and location plus 8%, or a flat figure in the first year
  // (the current month's too, whole-month figures, though its orders stop today).
  await db.query(
    `INSERT INTO sales_targets (org_id, location_id, month, target_amount)
     SELECT $1, l.id, m::date,
            COALESCE(
              (SELECT round(sum(o.amount) * 1.08, -2) FROM orders o
                WHERE o.org_id = $1 AND o.location_id = l.id
                  AND o.order_date >= (m - interval '1 year') AND o.order_date < (m - interval '11 months')),
              (SELECT round(sum(o.amount) * 1.05, -2) FROM orders o
                WHERE o.org_id = $1 AND o.location_id = l.id
                  AND o.order_date >= m AND o.order_date < m + interval '1 month'))
     FROM locations l, generate_series($2::date, $3::date, interval '1 month') AS m
     WHERE l.org_id = $1`,
    [orgId, window.from, window.to],
  );
}
