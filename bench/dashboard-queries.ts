// npm run bench -- dashboard-queries [--engine pglite|postgres|both]: the sample dashboard's widget
// queries through the engine (parse filters, compile, read-only tenant transaction under row-level
// security, JSON rows, formulas) against hand-written SQL WITHOUT row-level security: the same
// statements run by the owner, each table narrowed by a literal `org_id = 'org_acme'`. So the
// ratio includes what the RLS policies cost. On PGlite, and on PostgreSQL too when
// QUARRY_TEST_DATABASE_URL is set (both in one run).
import { withTenant } from "@/lib/db/tenant";
import { runWidgetQuery } from "@/lib/query/run";
import { compileWarehouseStatements, loadSampleDashboard, warehouseWidgets } from "./lib/sample-statements";
import { benchEngines } from "./lib/scratch-db";
import { withSeededDb } from "./lib/seeded-db";

const ROUNDS = 5;
const ORG = "org_acme";
const TENANT_TABLES = ["orders", "locations", "products", "sales_targets"];

/** The statement with each tenant table replaced by the organization's rows (inlined CTEs), for a role that bypasses RLS. */
function withoutRls(text: string): string {
  const ctes = TENANT_TABLES.map((t) => `${t} AS NOT MATERIALIZED (SELECT * FROM public.${t} WHERE org_id = '${ORG}')`).join(", ");
  return `WITH ${ctes} ${text}`;
}

export default async function bench(args: string[]): Promise<void> {
  for (const engine of benchEngines(args)) await withSeededDb(engine, () => run(engine));
}

async function run(engine: string) {
  const { dashboard } = loadSampleDashboard();
  const scope = { orgId: ORG };
  const now = new Date("2026-11-22T12:00:00Z");
  const timeZone = "America/New_York";
  const filterValues = {};
  const widgets = warehouseWidgets(dashboard);
  const statements = compileWarehouseStatements(dashboard, filterValues, { now, timeZone });
  const { prisma } = await (await import("@/lib/db/client")).getDb();

  const engineRun = async () => {
    for (const w of widgets) await runWidgetQuery({ scope, dashboard, widgetId: w.metadata.id, filterValues, now, timeZone });
  };
  const handWritten = async () => {
    await prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`SET LOCAL TimeZone = '${timeZone}'`);
      for (const s of statements) await tx.$queryRawUnsafe(withoutRls(s.text), ...s.values);
    });
  };
  const underRls = async () => {
    await withTenant(scope, async (tx) => {
      for (const s of statements) await tx.$queryRawUnsafe(s.text, ...s.values);
    }, { role: "reader", readOnly: true, timeZone });
  };

  // Same answers: the hand-written baseline must compute what the engine computes.
  const a = await prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(`SET LOCAL TimeZone = '${timeZone}'`);
    return Promise.all(statements.slice(0, 3).map((s) => tx.$queryRawUnsafe(withoutRls(s.text), ...s.values)));
  });
  const b = await withTenant(scope, (tx) => Promise.all(statements.slice(0, 3).map((s) => tx.$queryRawUnsafe(s.text, ...s.values))), { role: "reader", readOnly: true, timeZone });
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error("hand-written SQL and the RLS statements disagree");

  await engineRun();
  await handWritten();
  await underRls();
  const times = { engine: [] as number[], hand: [] as number[], rls: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    let start = performance.now();
    await handWritten();
    times.hand.push(performance.now() - start);
    start = performance.now();
    await underRls();
    times.rls.push(performance.now() - start);
    start = performance.now();
    await engineRun();
    times.engine.push(performance.now() - start);
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const [e, h, r] = [median(times.engine), median(times.hand), median(times.rls)];
  console.log(`\n[${engine}] dashboard: ${dashboard.manifest.metadata.id}, ${widgets.length} warehouse widgets, default filters, median of ${ROUNDS} rounds`);
  console.log(`hand-written SQL, owner, literal org_id, no RLS : ${h.toFixed(1)} ms`);
  console.log(`same statements under RLS, one transaction      : ${r.toFixed(1)} ms (${(r / h).toFixed(2)}x)`);
  console.log(`engine (compile + run per widget, RLS)          : ${e.toFixed(1)} ms`);
  console.log(`ratio engine/hand-written: ${(e / h).toFixed(2)}x (aim <= 1.2x)`);
}
