// The sample dashboard with extra datasets, widgets and filters, run widget by widget as the
// dashboard endpoint runs it: what the exactness tests of shared scans (lib/query/shared-scan.test.ts)
// and rollups (lib/rollups/rollups.test.ts) compare on seeded random filter sets.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { recordVersionRollups } from "@/lib/dashboards/version-rollups";
import { withTenant } from "@/lib/db/tenant";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { ParsedDashboard } from "@/lib/manifest/schema";
import { QueryError } from "@/lib/query/errors";
import { type StatementRunner, runReadOnlyBatch } from "@/lib/query/execute";
import type { RollupDefinition } from "@/lib/query/rollup-definition";
import { type WidgetQueryInput, type WidgetQueryResult, runWidgetQuery } from "@/lib/query/run";
import { declareRollups } from "@/lib/rollups/registry";

/** A table widget document with the given `data:` (and more) lines of its spec. */
export const widgetYaml = (id: string, spec: string) => `---
version: "1.0"
kind: widget
metadata: { id: ${id}, name: ${id} }
spec:
  component: table
  layout: { x: 0, y: 0, w: 1, h: 1 }
${spec}
`;

/** A select filter bound to every widget's `field` with `operator`. */
export const filterYaml = (id: string, field: string, operator: string) => `---
version: "1.0"
kind: widget
metadata: { id: ${id}, name: ${id} }
spec:
  component: filter
  layout: { x: 0, y: 0, w: 1, h: 1 }
  display: { filter: { control: select } }
  bindings: [{ target: "*", field: ${field}, operator: ${operator} }]
`;

/** docs/manifests/sample-dashboard.yaml with `datasets` (YAML list items) added to its own and `widgets` after it; `edit` sees the whole text before parsing. */
export function sampleWithExtras(datasets: string, widgets: string, edit: (yaml: string) => string = (yaml) => yaml): ParsedDashboard {
  const sample = fs.readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "manifests", "sample-dashboard.yaml"), "utf8");
  const [head, ...rest] = sample.split("\n---\n");
  const parsed = parseDashboardYaml(edit(`${[head.replace("\n  tabs:", `${datasets}\n  tabs:`), ...rest].join("\n---\n")}\n${widgets}`));
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => `${e.line}:${e.column} ${e.message}`).join("\n"));
  return parsed.dashboard;
}

/**
 * Declares rollups as a publish does: in a dashboard's next published version (of a new dashboard
 * without `dashboardId`), which records them, so the worker keeps them (lib/rollups/registry.ts
 * pruneRollups). Returns the dashboard's id.
 */
export async function publishRollups(orgId: string, definitions: readonly RollupDefinition[], dashboardId?: string): Promise<string> {
  const id = dashboardId ?? `dsh_rollups_${crypto.randomBytes(4).toString("hex")}`;
  await withTenant({ orgId }, async (tx) => {
    const ids = await declareRollups(tx, orgId, definitions);
    if (!dashboardId) await tx.dashboard.create({ data: { id, orgId, name: id, slug: id, draftYaml: "", createdBy: "test", updatedBy: "test" } });
    const version = ((await tx.dashboardVersion.aggregate({ where: { dashboardId: id }, _max: { version: true } }))._max.version ?? 0) + 1;
    await tx.dashboardVersion.create({ data: { orgId, dashboardId: id, version, name: id, specYaml: "", publishedBy: "test" } });
    await tx.dashboard.update({ where: { id }, data: { publishedVersion: version } });
    await recordVersionRollups(tx, id, version, ids);
  });
  return id;
}

/** Seeded, so a failure names an iteration that fails again (mulberry32). */
export function seededRandom(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type WidgetOutcome = WidgetQueryResult | { error: string };

/**
 * Runs `widgetIds` of `base.dashboard` in one batch transaction, as the dashboard endpoint does; a
 * widget's QueryError is its outcome. `wrapRunner` sees each widget's statement runner (to count statements).
 */
export async function runWidgets(
  base: Omit<WidgetQueryInput, "widgetId" | "runner">,
  widgetIds: readonly string[],
  wrapRunner: (runner: StatementRunner) => StatementRunner = (runner) => runner,
): Promise<Record<string, WidgetOutcome>> {
  const outcomes: Record<string, WidgetOutcome> = {};
  await runReadOnlyBatch(base.scope, widgetIds, { timeZone: base.timeZone, transactionTimeoutMs: 60_000 }, async (widgetId, runner) => {
    try {
      outcomes[widgetId] = await runWidgetQuery({ ...base, widgetId, runner: wrapRunner(runner) });
    } catch (error) {
      if (!(error instanceof QueryError)) throw error;
      outcomes[widgetId] = { error: error.message };
    }
  });
  return outcomes;
}
