import "server-only";
import { z } from "zod";
import type { TenantTx } from "@/lib/db/tenant";
import { inCurrency } from "@/lib/dashboards/column-formats";
import { DEFAULT_CURRENCY, formatValue } from "@/lib/dashboards/format";
import { resolveFormat, type ValueFormat } from "@/lib/manifest/value-format";
import { compileDataset } from "@/lib/query/compile";
import { KPI_CATALOG } from "@/lib/query/kpi-catalog";

/** What a rule found when it fired; `fingerprint` identifies the finding for deduplication. */
export interface Finding {
  subject: string;
  body: string;
  fingerprint: string;
  values: Record<string, unknown>;
}

export interface BaseRule<P extends z.ZodObject = z.ZodObject> {
  key: string;
  name: string;
  description: string;
  /** Declared thresholds; a custom rule's `thresholds` must parse with this (unknown names are rejected). */
  params: P;
  defaultSeverity: "info" | "warning" | "critical";
  defaultCron: string;
  /**
   * Role of the read-only evaluation transaction: `reader` for warehouse tables
   * (the role user SQL runs under); `app` where the reader role has no grant.
   */
  role: "reader" | "app";
  evaluate(tx: TenantTx, params: z.output<P>, now: Date): Promise<Finding | null>;
}

const pct = (description: string) => z.number().min(0).max(1000).describe(description);
const isoDay = (d: Date) => d.toISOString().slice(0, 10);
/**
 * Revenue in the revenue KPI's declared format, as every dashboard of the organization prints it ("$2,500.00"; "€2,500.00"
 * in a EUR organization: a format without a code reads in the organization's currency, lib/dashboards/column-formats.ts).
 */
async function moneyOf(tx: TenantTx): Promise<(n: number) => string> {
  const org = await tx.organization.findFirst({ select: { currency: true } });
  const format = resolveFormat(inCurrency(revenueFormat(), org?.currency ?? DEFAULT_CURRENCY));
  return (n) => formatValue(n, format);
}
const dayBefore = (day: string, days: number) => isoDay(new Date(Date.parse(`${day}T00:00:00Z`) - days * 86_400_000));

function revenueKpi() {
  const kpi = KPI_CATALOG.get("revenue");
  if (!kpi) throw new Error("The KPI catalog has no 'revenue' KPI");
  return kpi;
}

function revenueFormat(): ValueFormat {
  return revenueKpi().dataset.metrics.find((m) => m.id === "value")?.format ?? "number";
}

/**
 * Revenue over the days [from, to), per location or in total, from the catalog's `revenue` KPI
 * compiled by the dashboard engine: an alert counts revenue exactly as a KPI widget does. Runs in
 * the rule's own read-only reader transaction.
 */
async function kpiRevenue(tx: TenantTx, from: string, to: string, byLocation: boolean): Promise<Map<string, number>> {
  const compiled = compileDataset(revenueKpi().dataset, {
    columns: byLocation ? ["location_id", "value"] : ["value"],
    filters: [{ field: "order_date", predicate: { kind: "range", from, to, toInclusive: false } }],
    limit: 10_000,
  });
  const rows = await tx.$queryRawUnsafe<{ row: { location_id?: string; value: number | string | null } }[]>(compiled.text, ...compiled.values);
  return new Map(rows.map(({ row }) => [row.location_id ?? "*", Number(row.value ?? 0)]));
}

const gapToTarget: BaseRule<z.ZodObject<{ gap_pct: z.ZodDefault<z.ZodNumber> }>> = {
  key: "sales.gap_to_target",
  name: "Sales behind monthly target",
  description: "Month-to-date revenue per location against its monthly target pro-rated to today; fires for locations at least gap_pct percent behind.",
  params: z.strictObject({ gap_pct: pct("Percent behind the pro-rated target that fires the rule").default(10) }),
  defaultSeverity: "warning",
  defaultCron: "0 8 * * *",
  role: "reader",
  async evaluate(tx, params, now) {
    const today = isoDay(now);
    const targets = await tx.$queryRaw<{ location_id: string; name: string; month_start: string; expected: number }[]>`
      WITH b AS (SELECT date_trunc('month', ${today}::date)::date AS m0, ${today}::date AS d)
      SELECT t.location_id, l.name, b.m0::text AS month_start,
             (t.target_amount * (b.d - b.m0) / EXTRACT(day FROM (b.m0 + interval '1 month' - interval '1 day')))::float8 AS expected
        FROM sales_targets t JOIN locations l ON l.id = t.location_id CROSS JOIN b
       WHERE t.month = b.m0
       ORDER BY t.location_id`;
    const actual = targets.length > 0 ? await kpiRevenue(tx, targets[0].month_start, today, true) : new Map<string, number>();
    const rows = targets.map((t) => ({ ...t, actual: actual.get(t.location_id) ?? 0 }));
    const behind = rows
      .filter((r) => r.expected > 0)
      .map((r) => ({ ...r, gap_pct: Math.round(((r.expected - r.actual) / r.expected) * 1000) / 10 }))
      .filter((r) => r.gap_pct >= params.gap_pct);
    if (behind.length === 0) return null;
    const money = await moneyOf(tx);
    return {
      subject: `${behind.length} location(s) at least ${params.gap_pct}% behind target`,
      body: behind.map((r) => `${r.name}: ${money(r.actual)} of ${money(r.expected)} expected by ${isoDay(now)} (${r.gap_pct}% behind)`).join("\n"),
      fingerprint: `${isoDay(now).slice(0, 7)}:${behind.map((r) => r.location_id).join(",")}`,
      values: { locations: behind },
    };
  },
};

const dropVsLastWeek: BaseRule<z.ZodObject<{ drop_pct: z.ZodDefault<z.ZodNumber> }>> = {
  key: "sales.drop_vs_last_week",
  name: "Revenue dropped against the week before",
  description: "Revenue of the last seven full days against the seven days before; fires when it fell by at least drop_pct percent.",
  params: z.strictObject({ drop_pct: pct("Percent drop that fires the rule").default(20) }),
  defaultSeverity: "warning",
  defaultCron: "0 7 * * 1",
  role: "reader",
  async evaluate(tx, params, now) {
    const today = isoDay(now);
    const current = (await kpiRevenue(tx, dayBefore(today, 7), today, false)).get("*") ?? 0;
    const previous = (await kpiRevenue(tx, dayBefore(today, 14), dayBefore(today, 7), false)).get("*") ?? 0;
    if (previous <= 0) return null;
    const drop = Math.round(((previous - current) / previous) * 1000) / 10;
    if (drop < params.drop_pct) return null;
    const money = await moneyOf(tx);
    return {
      subject: `Revenue down ${drop}% against the week before`,
      body: `Last 7 days: ${money(current)}; the 7 days before: ${money(previous)}.`,
      fingerprint: isoDay(now),
      values: { current, previous, drop_pct: drop },
    };
  },
};

const revenueBelowFloor: BaseRule<z.ZodObject<{ min_revenue: z.ZodDefault<z.ZodNumber> }>> = {
  key: "sales.revenue_below_floor",
  name: "Location revenue below a daily floor",
  description: "Revenue per location on the last full day; fires for locations that took less than min_revenue (a location without sales counts as zero).",
  params: z.strictObject({ min_revenue: z.number().min(0).max(1e12).default(1000).describe("Daily revenue a location should reach") }),
  defaultSeverity: "warning",
  defaultCron: "0 6 * * *",
  role: "reader",
  async evaluate(tx, params, now) {
    const day = dayBefore(isoDay(now), 1);
    const revenue = await kpiRevenue(tx, day, isoDay(now), true);
    // Every location, so one without a single sale counts as zero rather than not at all.
    const locations = await tx.$queryRaw<{ location_id: string; name: string }[]>`SELECT id AS location_id, name FROM locations ORDER BY id`;
    const rows = locations.map((l) => ({ ...l, revenue: revenue.get(l.location_id) ?? 0 }));
    const below = rows.filter((r) => r.revenue < params.min_revenue);
    if (below.length === 0) return null;
    const money = await moneyOf(tx);
    return {
      subject: `${below.length} location(s) took less than ${money(params.min_revenue)} on ${day}`,
      body: below.map((r) => `${r.name}: ${money(r.revenue)}`).join("\n"),
      fingerprint: `${day}:${below.map((r) => r.location_id).join(",")}`,
      values: { day, locations: below },
    };
  },
};

const indexFailed: BaseRule<z.ZodObject<{ min_failures: z.ZodDefault<z.ZodNumber>; window_hours: z.ZodDefault<z.ZodNumber> }>> = {
  key: "documents.index_failed",
  name: "Document indexing failed",
  description: "Documents whose indexing failed within the last window_hours; fires at min_failures or more.",
  params: z.strictObject({
    min_failures: z.number().int().min(1).default(1).describe("Failed documents that fire the rule"),
    window_hours: z.number().int().min(1).max(24 * 30).default(24).describe("Look-back window in hours"),
  }),
  defaultSeverity: "critical",
  defaultCron: "*/15 * * * *",
  // The reader role has no grant on documents; this is our own fixed SQL in a read-only transaction.
  role: "app",
  async evaluate(tx, params, now) {
    const since = new Date(now.getTime() - params.window_hours * 3600_000);
    const rows = await tx.$queryRaw<{ id: string; title: string; status_reason: string | null }[]>`
      SELECT id, title, status_reason FROM documents
       WHERE status = 'failed' AND updated_at >= ${since} AND updated_at <= ${now}
       ORDER BY updated_at DESC LIMIT 50`;
    if (rows.length < params.min_failures) return null;
    return {
      subject: `${rows.length} document(s) failed to index`,
      body: rows.map((r) => `${r.title}: ${r.status_reason ?? "no reason recorded"}`).join("\n"),
      fingerprint: rows.map((r) => r.id).sort().join(","),
      values: { documents: rows },
    };
  },
};

/** The base rules custom rules are cloned from (widened: each evaluate only ever receives what its own params schema parsed). */
export const BASE_RULES: readonly BaseRule[] = [gapToTarget, dropVsLastWeek, revenueBelowFloor, indexFailed] as unknown as readonly BaseRule[];

export function findBaseRule(key: string): BaseRule | undefined {
  return BASE_RULES.find((r) => r.key === key);
}

/** The catalog as the API shows it, thresholds described from the same zod schemas. */
export function describeBaseRules() {
  return BASE_RULES.map((r) => ({
    key: r.key,
    name: r.name,
    description: r.description,
    default_severity: r.defaultSeverity,
    default_cron: r.defaultCron,
    thresholds: z.toJSONSchema(r.params, { io: "input" }) as Record<string, unknown>,
  }));
}
