// npm run bench -- widget-alerts [--engine pglite|postgres|both] [--alerts 1000] [--requests 40]:
// 1,000 widget alerts (issue 45 §5) over the seeded sample dashboard: KPI tiles, a chart's series and a table's
// metric (per location), under four filter sets, each told to its owner (the admin: every location) and a quarter also
// to a general manager (two locations), so the alerts span two recipient scopes. One round is what a data change
// makes the worker do: every data-change alert of the organization evaluated (lib/alerts/evaluate.ts: one dashboard
// query per dashboard, filters and scope, shared by every alert over them; each evaluation recorded with its state),
// the result cache emptied first so each round is as cold as the first after a change. Printed: evaluations per second
// and per round, the dashboard queries a round runs, and the p50/p95 of the sample's dashboard request (the real route
// handler, a new 31-day range each time, so nothing is cached) idle and while rounds run beside it in the same
// process, as the embedded worker runs beside the web server (aim: p95 within 1.5x of idle). The rounds run unpaced,
// then paced as the worker paces them (lib/query/background.ts), each first alone and then beside the requests.
import { NextRequest } from "next/server";
import { POST as seedRoute } from "@/app/api/v1/custom-dashboards/%5Fseed/route";
import { POST as queryRoute } from "@/app/api/v1/custom-dashboards/[id]/query/route";
import type { Principal } from "@/lib/access/roles";
import { createAlert } from "@/lib/alerts/alerts";
import { evaluateAlerts } from "@/lib/alerts/evaluate";
import { CreateAlertBody, type CreateAlertInput } from "@/lib/alerts/contract";
import { issueLocalToken } from "@/lib/auth/local-issuer";
import { forgetDashboardResults } from "@/lib/dashboards/result-cache";
import { seedDemoTables } from "@/lib/data/demo";
import { withTenant } from "@/lib/db/tenant";
import { closeQueue } from "@/lib/job-queue";
import { benchEngines } from "./lib/scratch-db";
import { withSeededDb } from "./lib/seeded-db";

type Handler = (req: NextRequest, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };

/** What the alerts watch: each KPI tile, a chart's series and a table's metric per location. */
const WATCHED: Pick<CreateAlertInput, "widget_id" | "column" | "reduce" | "per">[] = [
  { widget_id: "revenue_kpi" },
  { widget_id: "orders_kpi" },
  { widget_id: "margin_kpi" },
  { widget_id: "target_kpi" },
  { widget_id: "revenue_by_location", column: "revenue", reduce: "sum" },
  { widget_id: "location_table", column: "revenue", per: "location" },
];
const FILTER_SETS: Record<string, unknown>[] = [{}, { date: "last month" }, { date: "2025-06-01 to 2025-06-30" }, { date: "this year" }];

async function post(handler: Handler, url: string, token: string, body: unknown, params: Record<string, string> = {}) {
  const req = new NextRequest(new URL(url, "http://localhost"), {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const res = await handler(req, { params: Promise.resolve(params) });
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const ms = (n: number) => `${n.toFixed(1)} ms`;

function numberArg(args: string[], flag: string, fallback: number): number {
  const at = args.indexOf(flag);
  if (at < 0) return fallback;
  const value = Number(args[at + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} takes a whole number >= 1`);
  return value;
}

export default async function bench(args: string[]): Promise<void> {
  const alertCount = numberArg(args, "--alerts", 1000);
  const requests = numberArg(args, "--requests", 40);
  process.env.QUARRY_RATE_LIMIT_MULTIPLIER = "1000";
  // No worker in this process: the bench drives evaluations itself, and sends nothing.
  process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ in_process_worker: false });
  for (const engine of benchEngines(args)) {
    await withSeededDb(engine, async () => {
      try {
        await run(engine, alertCount, requests);
      } finally {
        await closeQueue();
      }
    });
  }
}

async function run(engine: string, alertCount: number, requests: number): Promise<void> {
  const token = await issueLocalToken({ userId: "usr_acme_admin", orgSlug: "acme", role: "admin" });
  const analyst = await issueLocalToken({ userId: "usr_acme_analyst", orgSlug: "acme", role: "analyst" });
  // The sample reads the demo organizations' own table too (issue 42), which `npm run db:seed` loads.
  await seedDemoTables();
  const dashboard = (await post(seedRoute as Handler, "/api/v1/custom-dashboards/_seed", token, undefined)) as { id: string };

  let made = performance.now();
  for (let i = 0; i < alertCount; i++) {
    const watched = WATCHED[i % WATCHED.length];
    const input: CreateAlertInput = {
      dashboard_id: dashboard.id,
      name: `Bench alert ${i}`,
      ...watched,
      filters: FILTER_SETS[Math.floor(i / WATCHED.length) % FILTER_SETS.length],
      // Thresholds differ from alert to alert; the widget, filters and scope they share are asked once.
      condition: i % 3 === 0 ? { kind: "below", threshold: i * 10 } : i % 3 === 1 ? { kind: "above", threshold: i * 10 } : { kind: "outside", low: i, high: i * 100 },
      cadence: { kind: "on_data_change" },
      recipients: { me: true, user_ids: i % 4 === 0 ? ["usr_acme_general_manager"] : [], user_channels: ["in_app"] },
    };
    await createAlert(admin, CreateAlertBody.parse(input), new Date());
  }
  made = performance.now() - made;
  console.log(`\n${engine}: ${alertCount.toLocaleString("en-US")} alerts over the sample dashboard (${WATCHED.length} widgets x ${FILTER_SETS.length} filter sets, 2 recipient scopes), made in ${(made / 1000).toFixed(1)} s`);

  // Each request a new 31-day range from 2025-01-01 on: nothing cached, as in bench dashboard-endpoint.
  // A request stopped at its time budget (503) counts with the time it took, and is counted: it is what a viewer saw.
  let day = 0;
  let stopped = 0;
  const request = async () => {
    const from = Date.UTC(2025, 0, 1) + (day++ % 600) * 86_400_000;
    const iso = (t: number) => new Date(t).toISOString().slice(0, 10);
    const started = performance.now();
    try {
      await post(queryRoute as Handler, `/api/v1/custom-dashboards/${dashboard.id}/query`, analyst, { filters: { date: `${iso(from)} to ${iso(from + 30 * 86_400_000)}` } }, { id: dashboard.id });
    } catch (error) {
      if (!(error instanceof Error && error.message.includes(" answered 503: "))) throw error;
      stopped++;
    }
    return performance.now() - started;
  };
  await request(); // warm the route's modules and the engine

  // The same rounds unpaced (as before pacing), then paced as the worker runs them (lib/query/background.ts), in this run.
  const alertIds = (await withTenant({ orgId: "org_acme" }, (tx) => tx.widgetAlert.findMany({ where: { cadenceKind: "on_data_change" }, select: { id: true } }))).map((r) => r.id);
  const round = async (label: string, pacer: null | undefined, index: number) => {
    forgetDashboardResults("org_acme", dashboard.id);
    const started = performance.now();
    const report = await evaluateAlerts("org_acme", alertIds, { trigger: "data_change", occurrence: `data:bench:${label}:${Date.now()}:${index}`, now: new Date(), pacer });
    return { ms: performance.now() - started, evaluations: report.evaluations.length, queries: report.queries };
  };
  for (const [label, pacer] of [["unpaced", null], ["paced", undefined]] as const) {
    // Idle measured right before each mode's rounds: on a machine shared with other work, load drifts within a run.
    const idle: number[] = [];
    stopped = 0;
    for (let i = 0; i < requests; i++) idle.push(await request());
    const [idle50, idle95] = [pct(idle, 50), pct(idle, 95)];
    console.log(`  dashboard request (${requests} each, cold), idle before the ${label} rounds: p50 ${ms(idle50)} p95 ${ms(idle95)}, ${stopped} stopped at their time budget`);
    stopped = 0;
    // A round with no viewer beside it: what pacing costs when nobody waits.
    const alone = await round(`${label}:alone`, pacer, 0);
    console.log(`  ${label}, no requests beside it: a round of ${alone.evaluations.toLocaleString("en-US")} evaluations in ${(alone.ms / 1000).toFixed(1)} s, ${(alone.evaluations / (alone.ms / 1000)).toFixed(0)} evaluations/s`);
    const rounds: { ms: number; evaluations: number; queries: number }[] = [];
    let requestsDone = false;
    const evaluating = (async () => {
      // Rounds go on while the requests run (and at least one completes), each after a "data change".
      for (let index = 1; index === 1 || !requestsDone; index++) rounds.push(await round(label, pacer, index));
    })();
    const busy: number[] = [];
    for (let i = 0; i < requests; i++) busy.push(await request());
    requestsDone = true;
    await evaluating;

    const evaluations = rounds.reduce((n, r) => n + r.evaluations, 0);
    const seconds = rounds.reduce((n, r) => n + r.ms, 0) / 1000;
    console.log(`  ${label}, beside requests: ${rounds.length} rounds, ${rounds[0].evaluations.toLocaleString("en-US")} evaluations and ${rounds[0].queries} dashboard queries a round (one per dashboard, filters and scope)`);
    console.log(`    evaluations per second: ${(evaluations / seconds).toFixed(0)} (a round of all ${alertCount.toLocaleString("en-US")} alerts: ${(rounds.reduce((n, r) => n + r.ms, 0) / rounds.length / 1000).toFixed(1)} s on average, first ${(rounds[0].ms / 1000).toFixed(1)} s)`);
    const [busy50, busy95] = [pct(busy, 50), pct(busy, 95)];
    console.log(`    dashboard request beside evaluations: p50 ${ms(busy50)} p95 ${ms(busy95)}: p95 x${(busy95 / idle95).toFixed(2)} of idle (aim <= 1.5), ${stopped} stopped at their time budget`);
  }
}
