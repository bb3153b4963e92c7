import "server-only";
import { findOrganization } from "@/lib/auth/directory";
import { grantForPrincipal, type GrantedDashboard } from "@/lib/dashboards/policy";
import { queryGranted } from "@/lib/dashboards/query";
import type { WidgetResult } from "@/lib/dashboards/contract";
import type { ValidManifest } from "@/lib/dashboards/manifest";
import { withTenant } from "@/lib/db/tenant";
import { DomainError } from "@/lib/errors";
import { log } from "@/lib/log";
import type { AlertCondition, AlertDefinition, ChangePeriod } from "@/lib/manifest/alert";
import { backgroundPacer, type BackgroundPacer } from "@/lib/db/priority";
import { previousAlignedPeriod } from "@/lib/query/dates";
import { FilterValueError, toPredicate, widgetConditions } from "@/lib/query/filters";
import { scopeKey, scopePrincipal } from "@/lib/reports/schedules-scope";
import type { AlertMessageTarget, EvaluationOutcome } from "./contract";
import { alertRecord, type AlertRecord } from "./record";
import { alertTargets, organizationChannels, type ScopedTargets } from "./recipients";
import { recordEvaluation, unclaimedAlertMessages, type Measured, type Recorded, type RecordInput } from "./state";

/**
 * Evaluating widget alerts (issue 45 §2, §5). An alert's value is what its widget shows: the widget's own query,
 * through the dashboard engine's entry for a granted dashboard (queryGranted: rollups, shared scans, the result cache,
 * the cost limits), never a copy of it. It runs in each recipient scope as that scope's principal (the same policy and
 * row-level security as the viewer), once per distinct dashboard, filters and scope for every widget and alert over
 * them. A change compares with the previous aligned period: the alert's date filter shifted back (lib/query/dates.ts)
 * and the same query run again.
 */

/**
 * Hands messages to delivery (alerts-surface's step: render, fan out through the notification pipeline). It claims
 * each with claimAlertMessage inside the fan-out's transaction, so handing one over twice sends it once.
 */
export type AlertDelivery = (orgId: string, messageIds: readonly string[]) => Promise<void>;

export interface EvaluationRun {
  trigger: "cron" | "data_change" | "test";
  /** What is evaluated (a cron instant, a data change's id): a retry of the same occurrence records and sends nothing twice. Null for a test. */
  occurrence: string | null;
  now: Date;
  deliver?: AlertDelivery;
  /** Alerts read, or results recorded, per transaction (TRANSACTION_BATCH unless said; bench widget-alerts compares 1). */
  transactionBatch?: number;
  /**
   * How the worker yields to viewers (lib/db/priority.ts): unless said, a worker's evaluation is paced with the
   * defaults and "test now" (someone waits for it) is not; null runs unpaced (bench widget-alerts compares both).
   */
  pacer?: BackgroundPacer | null;
}

export interface ScopeEvaluation {
  alertId: string;
  scopeKey: string;
  dimensionValue: string | null;
  measured: Measured;
  /** Null when this occurrence was recorded already (a retry). */
  recorded: Recorded | null;
}

export interface EvaluationReport {
  evaluations: ScopeEvaluation[];
  /** Dashboard queries run: one per distinct dashboard, filters and scope, for every alert over them. */
  queries: number;
  /** Messages handed to delivery (new ones, and earlier ones a crash left unclaimed). */
  messageIds: string[];
}

/** One alert in one scope: what to ask and whom it concerns. */
interface Job {
  alert: AlertRecord;
  scoped: ScopedTargets;
  filters: Record<string, unknown>;
  previousFilters: Record<string, unknown> | null;
  /** Why it cannot be evaluated in this scope (the scope may not view the dashboard, a filter cannot be read). */
  problem?: string;
  /** Dimension values of states this alert and scope already have (no_data per value). */
  knownValues: string[];
}

/** JSON with object keys sorted: equal filters, equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The alert's filters with every date condition on its widget pinned to the days it means at `now` (so the value and
 * the previous period are read at one instant), and for a change the same filters shifted back one period. Throws
 * FilterValueError for a value the engine cannot read.
 */
export function alertFilters(manifest: ValidManifest, widgetId: string, filters: Record<string, unknown>, against: ChangePeriod | null, now: Date, timeZone: string) {
  const widget = manifest.widgetsById.get(widgetId);
  if (!widget) throw new FilterValueError(widgetId, `the dashboard has no widget '${widgetId}'`);
  // Every date condition on the widget, a `*` binding on a field it lacks included: pinning or shifting that one
  // changes nothing, since the engine leaves it out.
  const dates = widgetConditions(manifest.widgets, widget, filters).filter((c) => c.operator === "date");
  const current: Record<string, unknown> = { ...filters };
  const previous: Record<string, unknown> = { ...filters };
  for (const condition of dates) {
    const predicate = toPredicate(condition, { now, timeZone });
    const days = predicate.kind === "range" ? predicate.days : undefined;
    if (!days?.from || !days.to) {
      if (against) throw new FilterValueError(condition.source, "a change alert needs its date filter to name a bounded range of days (such as this month or 2025-03-01 to 2025-03-31)");
      continue;
    }
    current[condition.source] = `${days.from} to ${lastDay(days.to)}`;
    if (against) previous[condition.source] = previousAlignedPeriod({ from: days.from, to: days.to }, against);
  }
  if (against && dates.length === 0) throw new FilterValueError(widgetId, "a change alert needs a date filter on its widget, to know which period came before");
  return { current, previous: against ? previous : null };
}

/** The day before an exclusive `YYYY-MM-DD` bound (the range's last day). */
function lastDay(exclusive: string): string {
  const [y, m, d] = exclusive.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d - 1)).toISOString().slice(0, 10);
}

const numberOf = (v: unknown): number | null => {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "string" && v.trim() !== "") {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
};

function reduce(values: readonly number[], how: AlertDefinition["reduce"]): number | null {
  if (values.length === 0) return null;
  switch (how) {
    case "first":
      return values[0];
    case "last":
      return values[values.length - 1];
    case "sum":
      return values.reduce((a, b) => a + b, 0);
    case "min":
      return Math.min(...values);
    case "max":
      return Math.max(...values);
    case "mean":
      return values.reduce((a, b) => a + b, 0) / values.length;
  }
}

/** The column an alert watches: its own, else the KPI's value mapping, else the widget's first column. */
function watchedColumn(manifest: ValidManifest, alert: AlertRecord, result: WidgetResult): string | null {
  if (alert.definition.column) return alert.definition.column;
  const mapped = manifest.widgetsById.get(alert.row.widgetId)?.spec.data?.mappings?.value;
  if (typeof mapped === "string") return mapped;
  return result.columns.find((c) => c !== alert.definition.per) ?? null;
}

interface Figures {
  value: number | null;
  volume: number | null;
}

/** The value (and volume) per dimension value ('' without `per`), rows in the widget's order. */
function figures(manifest: ValidManifest, alert: AlertRecord, result: WidgetResult): Map<string, Figures> {
  const { per, reduce: how, min_volume: guard } = alert.definition;
  const column = watchedColumn(manifest, alert, result);
  const groups = new Map<string, Record<string, unknown>[]>();
  if (!per) groups.set("", result.rows);
  else for (const row of result.rows) groups.set(String(row[per] ?? ""), [...(groups.get(String(row[per] ?? "")) ?? []), row]);
  const out = new Map<string, Figures>();
  for (const [key, rows] of groups) {
    const values = column ? rows.map((r) => numberOf(r[column])).filter((n): n is number => n !== null) : [];
    const volumes = guard ? rows.map((r) => numberOf(r[guard.column])).filter((n): n is number => n !== null) : [];
    out.set(key, { value: reduce(values, how), volume: guard ? reduce(volumes, "sum") : null });
  }
  return out;
}

/** The thresholds an evaluation records: above/below their threshold, outside low and high, change its amount. */
function thresholds(condition: AlertCondition): { threshold: number | null; thresholdHigh: number | null } {
  switch (condition.kind) {
    case "above":
    case "below":
      return { threshold: condition.threshold, thresholdHigh: null };
    case "outside":
      return { threshold: condition.low, thresholdHigh: condition.high };
    case "change":
      return { threshold: condition.amount, thresholdHigh: null };
    case "no_data":
      return { threshold: null, thresholdHigh: null };
  }
}

/** Judges one value against the condition: the outcome and, for a change, the change. */
export function judge(condition: AlertCondition, value: number | null, previous: number | null): { outcome: EvaluationOutcome; change: number | null } {
  if (condition.kind === "no_data") return { outcome: value === null ? "met" : "not_met", change: null };
  if (value === null) return { outcome: "no_data", change: null };
  switch (condition.kind) {
    case "above":
      return { outcome: value > condition.threshold ? "met" : "not_met", change: null };
    case "below":
      return { outcome: value < condition.threshold ? "met" : "not_met", change: null };
    case "outside":
      return { outcome: value < condition.low || value > condition.high ? "met" : "not_met", change: null };
    case "change": {
      if (previous === null) return { outcome: "no_data", change: null };
      const difference = value - previous;
      // A percentage of nothing is no percentage: with a previous value of 0 the change cannot be judged.
      if (condition.measure === "percent" && previous === 0) return { outcome: "no_data", change: null };
      const change = condition.measure === "percent" ? (difference / Math.abs(previous)) * 100 : difference;
      const met = condition.direction === "increase" ? change >= condition.amount : condition.direction === "decrease" ? change <= -condition.amount : Math.abs(change) >= condition.amount;
      return { outcome: met ? "met" : "not_met", change };
    }
  }
}

/** What an evaluation that could not run records. */
const failed = (condition: AlertCondition, error: string): Measured => ({
  value: null,
  previousValue: null,
  change: null,
  ...thresholds(condition),
  outcome: "error",
  source: null,
  rollup: null,
  error,
});

/** Measures one alert in one scope, per dimension value, from its widget's results now and in the previous period. */
function measure(manifest: ValidManifest, job: Job, current: WidgetResult, previous: WidgetResult | null): Map<string, Measured> {
  const { condition, min_volume: guard } = job.alert.definition;
  const out = new Map<string, Measured>();
  if (current.error) return new Map([["", failed(condition, current.error.detail)]]);
  if (previous?.error) return new Map([["", failed(condition, `the previous period: ${previous.error.detail}`)]]);
  const now = figures(manifest, job.alert, current);
  const before = previous ? figures(manifest, job.alert, previous) : new Map<string, Figures>();
  // A value seen before and absent now has no data now (what no_data per value watches).
  const keys = new Set([...now.keys(), ...(job.alert.definition.per ? job.knownValues : [])]);
  if (keys.size === 0) keys.add("");
  const source = current.source ? { source: current.source.kind, rollup: current.source.kind === "rollup" ? current.source.name : null } : { source: null, rollup: null };
  for (const key of keys) {
    const figure = now.get(key) ?? { value: null, volume: null };
    const previousValue = before.get(key)?.value ?? null;
    const base = { value: figure.value, previousValue: previous ? previousValue : null, ...thresholds(condition), ...source, error: null };
    if (guard && figure.value !== null && (figure.volume ?? 0) < guard.at_least) {
      out.set(key, { ...base, change: null, outcome: "below_min_volume" });
      continue;
    }
    out.set(key, { ...base, ...judge(condition, figure.value, previousValue) });
  }
  return out;
}

const silencedAt = (alert: AlertRecord, now: Date) => alert.row.muted || (alert.row.snoozedUntil !== null && alert.row.snoozedUntil.getTime() > now.getTime());

/** Alerts read, or results recorded, per transaction: short enough to let dashboard requests in between on the embedded engine. */
const TRANSACTION_BATCH = 25;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Evaluates alerts of one organization for one occurrence: recipients read now and grouped by scope; one query per
 * distinct dashboard, filters and scope; one recorded evaluation (and state move, and message owed) per alert, scope
 * and dimension value, TRANSACTION_BATCH of them per transaction; then every unclaimed message of these alerts handed to delivery.
 * A test (`trigger: "test"`) records its evaluations and moves no state, owes no message and delivers nothing.
 */
export async function evaluateAlerts(orgId: string, alertIds: readonly string[], run: EvaluationRun): Promise<EvaluationReport> {
  const pacer = run.pacer === undefined ? (run.trigger === "test" ? null : backgroundPacer()) : run.pacer;
  return pacer ? pacer.run(() => evaluate(orgId, alertIds, run, () => pacer.pace())) : evaluate(orgId, alertIds, run, async () => {});
}

/** evaluateAlerts' work; `pace` before each transaction and dashboard query lets viewers' requests go first. */
async function evaluate(orgId: string, alertIds: readonly string[], run: EvaluationRun, pace: () => Promise<void>): Promise<EvaluationReport> {
  const org = await findOrganization(orgId);
  if (!org || alertIds.length === 0) return { evaluations: [], queries: 0, messageIds: [] };
  const timeZone = org.timeZone ?? "UTC";
  const [rows, states] = await withTenant({ orgId }, async (tx) => {
    const rows = await tx.widgetAlert.findMany({ where: { id: { in: [...alertIds] } }, orderBy: { id: "asc" } });
    const states = await tx.widgetAlertState.findMany({ where: { alertId: { in: rows.map((r) => r.id) } }, select: { alertId: true, scopeKey: true, dimensionValue: true } });
    return [rows, states] as const;
  });
  // What every alert reads alike (usable channels, report domains): once, not once per alert.
  const channels = await withTenant({ orgId }, organizationChannels);
  const loaded: { alert: AlertRecord; scoped: ScopedTargets[]; known: Map<string, string[]> }[] = [];
  // A few alerts per transaction: a thousand alerts' recipients read in one outlived the transaction timeout and held
  // the embedded engine's one connection from every dashboard request meanwhile, and one per alert spent the round
  // opening transactions (bench widget-alerts).
  for (const batch of chunks(rows, run.transactionBatch ?? TRANSACTION_BATCH)) {
    await pace();
    const targets = await withTenant({ orgId }, async (tx) => {
      const read: ScopedTargets[][] = [];
      for (const row of batch) read.push(await alertTargets(tx, alertRecord(row), channels));
      return read;
    });
    batch.forEach((row, i) => {
      const known = new Map<string, string[]>();
      for (const s of states.filter((s) => s.alertId === row.id)) known.set(s.scopeKey, [...(known.get(s.scopeKey) ?? []), s.dimensionValue]);
      loaded.push({ alert: alertRecord(row), scoped: targets[i], known });
    });
  }

  // Each scope's grant of each dashboard, asked once: a scope that may not view it gets nothing.
  const grants = new Map<string, Promise<GrantedDashboard | string>>();
  const grantFor = (dashboardId: string, scoped: ScopedTargets) => {
    const key = `${dashboardId} ${scopeKey(scoped.scope)}`;
    if (!grants.has(key)) {
      grants.set(
        key,
        grantForPrincipal(scopePrincipal(org, scoped.queryFor, scoped.scope), dashboardId, "published").then(
          (g) => (g.version === "draft" ? "the dashboard is not published" : !g.parsed.ok ? "the published version no longer passes Quarry's checks" : g),
          (error: unknown) => {
            if (error instanceof DomainError) return `this scope may not view the dashboard (${error.message})`;
            throw error;
          },
        ),
      );
    }
    return grants.get(key)!;
  };

  const jobs: (Job & { granted: GrantedDashboard | null })[] = [];
  for (const { alert, scoped, known } of loaded) {
    for (const s of scoped) {
      const granted = await grantFor(alert.row.dashboardId, s);
      const knownValues = known.get(scopeKey(s.scope)) ?? [];
      const base = { alert, scoped: s, knownValues, filters: alert.definition.filters, previousFilters: null };
      // A scope that may not view the dashboard is told nothing and nothing is recorded for it: its recipients lost access.
      if (typeof granted === "string") {
        log.info("widget alert scope skipped", { orgId, alertId: alert.row.id, scope: scopeKey(s.scope), reason: granted });
        continue;
      }
      if (!granted.parsed.ok) continue;
      const condition = alert.definition.condition;
      try {
        const { current, previous } = alertFilters(granted.parsed.value, alert.row.widgetId, alert.definition.filters, condition.kind === "change" ? condition.against : null, run.now, timeZone);
        jobs.push({ ...base, granted, filters: current, previousFilters: previous });
      } catch (error) {
        if (!(error instanceof FilterValueError)) throw error;
        jobs.push({ ...base, granted, problem: error.reason });
      }
    }
  }

  // One query per dashboard, filters and scope, for all the widgets asked of it (§5: alerts over the same widget,
  // filters and scope share it, and different widgets under the same filters share its scans).
  const requests = new Map<string, { granted: GrantedDashboard; filters: Record<string, unknown>; widgets: Set<string>; answer?: Promise<Record<string, WidgetResult> | string> }>();
  const requestKey = (job: (typeof jobs)[number], filters: Record<string, unknown>) => `${job.alert.row.dashboardId} ${scopeKey(job.scoped.scope)} ${canonical(filters)}`;
  for (const job of jobs) {
    if (job.problem || !job.granted) continue;
    for (const filters of [job.filters, job.previousFilters]) {
      if (!filters) continue;
      const key = requestKey(job, filters);
      const request = requests.get(key) ?? { granted: job.granted, filters, widgets: new Set<string>() };
      request.widgets.add(job.alert.row.widgetId);
      requests.set(key, request);
    }
  }
  let queries = 0;
  const answer = (key: string) => {
    const request = requests.get(key)!;
    request.answer ??= (queries++,
    pace()
      .then(() => queryGranted(request.granted, "viewer", request.filters, [...request.widgets], { timeZone }))
      .then(
        (r) => r.widgets,
        (error: unknown) => {
          if (error instanceof DomainError) return error.message;
          throw error;
        },
      ));
    return request.answer;
  };

  const results: { job: (typeof jobs)[number]; input: RecordInput }[] = [];
  for (const job of jobs) {
    const condition = job.alert.definition.condition;
    let measured: Map<string, Measured>;
    if (job.problem || !job.granted?.parsed.ok) measured = new Map([["", failed(condition, job.problem ?? "the dashboard cannot be queried")]]);
    else {
      const manifest = job.granted.parsed.value;
      const now = await answer(requestKey(job, job.filters));
      const before = job.previousFilters ? await answer(requestKey(job, job.previousFilters)) : null;
      if (typeof now === "string") measured = new Map([["", failed(condition, now)]]);
      else if (typeof before === "string") measured = new Map([["", failed(condition, `the previous period: ${before}`)]]);
      else measured = measure(manifest, job, now[job.alert.row.widgetId], before ? before[job.alert.row.widgetId] : null);
    }
    const key = scopeKey(job.scoped.scope);
    const rules = {
      notifyOnResolved: job.alert.definition.notify_on_resolved,
      renotifyMinutes: job.alert.definition.renotify_minutes,
      onlyOnce: job.alert.definition.only_once,
      silenced: silencedAt(job.alert, run.now),
    };
    const targets: AlertMessageTarget[] = job.scoped.targets;
    for (const [dimensionValue, m] of measured) {
      results.push({ job, input: { orgId, alertId: job.alert.row.id, rules, trigger: run.trigger, occurrence: run.occurrence, now: run.now, scopeKey: key, dimensionValue, measured: m, targets } });
    }
  }

  // Each result's evaluation, state move and message commit together with those of its batch, or not at all: a worker
  // killed mid-round leaves whole batches, and the retried occurrence records only what is missing.
  const evaluations: ScopeEvaluation[] = [];
  for (const batch of chunks(results, run.transactionBatch ?? TRANSACTION_BATCH)) {
    await pace();
    const recorded = await withTenant({ orgId }, async (tx) => {
      const done: (Recorded | null)[] = [];
      for (const { input } of batch) done.push(await recordEvaluation(tx, input));
      return done;
    });
    batch.forEach(({ job, input }, i) => {
      evaluations.push({ alertId: job.alert.row.id, scopeKey: input.scopeKey, dimensionValue: job.alert.definition.per ? input.dimensionValue : null, measured: input.measured, recorded: recorded[i] });
    });
  }

  if (run.trigger === "test") return { evaluations, queries, messageIds: [] };
  await pace();
  const messageIds = await withTenant({ orgId }, (tx) => unclaimedAlertMessages(tx, alertIds));
  if (messageIds.length > 0 && run.deliver) await run.deliver(orgId, messageIds);
  return { evaluations, queries, messageIds };
}
