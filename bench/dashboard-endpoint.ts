// npm run bench -- dashboard-endpoint [--engine pglite|postgres|both]: latency of
// POST /api/v1/custom-dashboards/{id}/query for the seeded sample dashboard (real route handler:
// auth, zod, one tenant transaction per request, cache), cold (every request a new date filter) and
// cached, at concurrency 8, beside the bare SQL of the same statements. On PGlite, and on PostgreSQL
// too when QUARRY_TEST_DATABASE_URL is set (both in one run).
import { NextRequest } from "next/server";
import { POST as seedRoute } from "@/app/api/v1/custom-dashboards/%5Fseed/route";
import { POST as queryRoute } from "@/app/api/v1/custom-dashboards/[id]/query/route";
import { issueLocalToken } from "@/lib/auth/local-issuer";
import { findOrganization } from "@/lib/auth/directory";
import { forgetDashboardResults } from "@/lib/dashboards/result-cache";
import { withTenant } from "@/lib/db/tenant";
import { compileWarehouseStatements, loadSampleDashboard } from "./lib/sample-statements";
import { benchEngines } from "./lib/scratch-db";
import { withSeededDb } from "./lib/seeded-db";

const CONCURRENCY = 8;
const COLD_REQUESTS = 48;
const CACHED_REQUESTS = 400;
const BARE_SAMPLES = 20;

type Handler = (req: NextRequest, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

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

/** Runs `count` jobs with at most CONCURRENCY in flight; returns each job's latency in ms and the wall time. */
async function load(count: number, job: (i: number, worker: number) => Promise<unknown>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (next < count) {
        const i = next++;
        const t = performance.now();
        await job(i, worker);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - started };
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const dateFilter = (i: number) => ({ date: `after ${new Date(Date.UTC(2025, 0, 1) + i * 86_400_000).toISOString().slice(0, 10)}` });

export default async function bench(args: string[]): Promise<void> {
  for (const engine of benchEngines(args)) await withSeededDb(engine, () => run(engine));
}

async function run(engine: "pglite" | "postgres"): Promise<void> {
  const token = await issueLocalToken({ userId: "usr_acme_admin", orgSlug: "acme", role: "admin" });
  const seeded = (await post(seedRoute as Handler, "/api/v1/custom-dashboards/_seed", token, undefined)) as { id: string };
  // Results are cached in this process by dashboard and version, which both engines' seeds share.
  forgetDashboardResults("org_acme", seeded.id);
  // One caller per concurrent client, as eight analysts would be: the endpoint's rate limit is per caller.
  const analysts = await Promise.all(
    Array.from({ length: CONCURRENCY }, (_, k) => issueLocalToken({ userId: `usr_acme_bench_${k}`, orgSlug: "acme", role: "analyst" })),
  );
  const query = (filters: Record<string, unknown>, worker = 0) =>
    post(queryRoute as Handler, `/api/v1/custom-dashboards/${seeded.id}/query`, analysts[worker], { filters }, { id: seeded.id });

  await query(dateFilter(-1)); // warm-up: manifest parse cache, JIT
  const cold = await load(COLD_REQUESTS, (i, worker) => query(dateFilter(i), worker));
  const hot = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => dateFilter(1000 + i));
  for (const filters of hot) await query(filters);
  const cached = await load(CACHED_REQUESTS, (i, worker) => query(hot[i % hot.length], worker));

  const { dashboard } = loadSampleDashboard();
  const timeZone = (await findOrganization("org_acme"))?.timeZone ?? "UTC";
  const bareMs: number[] = [];
  for (let i = 0; i < BARE_SAMPLES; i++) {
    const statements = compileWarehouseStatements(dashboard, dateFilter(i * 7), { now: new Date(), timeZone });
    const t = performance.now();
    await withTenant({ orgId: "org_acme" }, async (tx) => {
      for (const s of statements) await tx.$queryRawUnsafe(s.text, ...s.values);
    }, { role: "reader", readOnly: true, timeZone });
    bareMs.push(performance.now() - t);
  }
  const bare = pct(bareMs, 50);
  const line = (name: string, r: { latencies: number[]; wallMs: number }) =>
    `${name.padEnd(8)} p50 ${pct(r.latencies, 50).toFixed(1).padStart(7)} ms  p95 ${pct(r.latencies, 95).toFixed(1).padStart(7)} ms  ` +
    `${((r.latencies.length / r.wallMs) * 1000).toFixed(1).padStart(7)} req/s  service time ${(r.wallMs / r.latencies.length).toFixed(1)} ms/req = ${(r.wallMs / r.latencies.length / bare).toFixed(2)}x bare`;
  console.log(`\n[${engine}] POST /api/v1/custom-dashboards/{id}/query, sample dashboard (${dashboard.widgets.length} widgets), concurrency ${CONCURRENCY}`);
  console.log(`bare SQL  p50 ${bare.toFixed(1).padStart(7)} ms  (same statements, one transaction, sequential, ${BARE_SAMPLES} filter values)`);
  console.log(line("cold", cold) + `  (${COLD_REQUESTS} requests, each a new date filter)`);
  console.log(line("cached", cached) + `  (${CACHED_REQUESTS} requests over ${hot.length} filter values)`);
  if (engine === "pglite") console.log("latency includes queueing: the embedded PGlite is one connection, so 8 concurrent cold requests wait for each other");
}
