import "server-only";
import crypto from "node:crypto";
import { Readable } from "node:stream";
import { type TenantScope, withTenant } from "@/lib/db/tenant";
import { findOrganization } from "@/lib/auth/directory";
import { DEMO_ORGS } from "@/lib/demo/seed";
import { TypeInference, columnIdentifiers, openRowSource } from "./formats";
import { sourceLimits } from "./limits";
import { loadTable } from "./load";
import { findTableEntry } from "./tables";

/*
 * The demo organizations' own table (issue 42 §4): daily marketing spend per location and channel,
 * loaded the way an admin's upload is (the CSV parser, type inference over the whole file, loadTable),
 * so the sample dashboard has a widget over a table an organization loaded. The CSV is written at seed
 * time so its days end on the day of seeding, as the warehouse's do.
 */

export const DEMO_TABLE = "marketing_spend";
/** Days of spend, ending today in the organization's zone. */
export const DEMO_SPEND_DAYS = 90;
const CHANNELS = [
  { name: "search", base: 120 },
  { name: "social", base: 80 },
  { name: "email", base: 25 },
] as const;

/** Today's date in `timeZone` (YYYY-MM-DD). */
function localToday(now: Date, timeZone: string): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(now);
}

/**
 * The demo CSV of one organization: `day,location_code,channel,spend,clicks`, a row per day, location
 * (by code) and channel. Values come from a hash of the row, so every machine seeding on one day
 * writes the same file.
 */
export function marketingSpendCsv(org: Pick<(typeof DEMO_ORGS)[number], "slug" | "timeZone" | "locations">, now: Date = new Date()): string {
  const last = Date.parse(`${localToday(now, org.timeZone)}T00:00:00Z`);
  const lines = ["day,location_code,channel,spend,clicks"];
  for (let back = DEMO_SPEND_DAYS - 1; back >= 0; back--) {
    const day = new Date(last - back * 86_400_000).toISOString().slice(0, 10);
    for (const location of org.locations) {
      for (const channel of CHANNELS) {
        const h = crypto.createHash("sha256").update(`${org.slug}|${day}|${location.code}|${channel.name}`).digest().readUInt32BE(0) / 2 ** 32;
        const spend = Math.round(channel.base * (0.6 + 0.8 * h) * 100) / 100;
        const clicks = Math.round(spend * (2 + 3 * h));
        lines.push(`${day},${location.code},${channel.name},${spend.toFixed(2)},${clicks}`);
      }
    }
  }
  return `${lines.join("\n")}\n`;
}

const open = (csv: string) => openRowSource(Readable.from([Buffer.from(csv)]), { format: "csv", limits: sourceLimits() });

/** Loads the table for one organization as an admin would: infer the types over every row, then create it. */
export async function loadDemoTable(scope: TenantScope, csv: string): Promise<number> {
  const probe = await open(csv);
  const inference = new TypeInference(probe.header.length);
  for await (const row of probe.rows) inference.observe(row);
  const types = inference.result();
  const names = columnIdentifiers(probe.header);
  const report = await loadTable(
    scope,
    {
      table: DEMO_TABLE,
      mode: "create",
      columns: names.map((name, from) => ({ name, type: types[from], from })),
      locationColumn: { name: "location_code", by: "code" },
      onBadRow: "fail",
      actor: { system: "demo seed" },
    },
    await open(csv),
  );
  return report.rowsLoaded;
}

/** Demo start: each demo organization without the table gets it. Returns how many were loaded. */
export async function seedDemoTables(now: Date = new Date()): Promise<number> {
  let loaded = 0;
  for (const demo of DEMO_ORGS) {
    const org = await findOrganization(demo.slug);
    if (!org) continue;
    const scope: TenantScope = { orgId: org.id, locationIds: null };
    if (await withTenant(scope, (tx) => findTableEntry(tx, DEMO_TABLE))) continue;
    await loadDemoTable(scope, marketingSpendCsv(demo, now));
    loaded += 1;
  }
  return loaded;
}
