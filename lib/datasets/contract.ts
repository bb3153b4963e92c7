import { z } from "zod";

/**
 * What a plan says about shared dataset files (issue 48 §1-2), beside its dashboards: what would change, and what
 * reads it (impact), with values before and after.
 */

export const ColumnChange = z.object({
  column: z.string(),
  kind: z.enum(["dimension", "metric"]),
  change: z.enum(["added", "removed", "changed", "renamed"]).describe("renamed: removed, and a column of the new definition names it among its aliases"),
  successor: z.string().nullable().describe("for renamed: the column that carries it on"),
});
export type ColumnChange = z.infer<typeof ColumnChange>;

export const ImpactValues = z
  .object({
    columns: z.array(z.string()),
    rows: z.array(z.record(z.string(), z.unknown())).describe("at most 10 rows"),
    error: z.string().nullable().describe("the query failed (or was not run: the plan's time for values ran out)"),
  })
  .nullable();
export type ImpactValues = z.infer<typeof ImpactValues>;

export const ImpactReader = z.object({
  kind: z.enum(["widget", "embed", "report_schedule", "alert"]),
  dashboard: z.string().describe("the dashboard's slug"),
  widget: z.string().nullable(),
  id: z.string().nullable().describe("the embed, schedule or alert id"),
  name: z.string().nullable(),
  filters: z.record(z.string(), z.unknown()).describe("the filter values it reads with (its locked or saved filters; the dashboard's defaults for a widget)"),
  before: ImpactValues,
  after: ImpactValues,
  changed: z.boolean().describe("the values before and after differ"),
});
export type ImpactReader = z.infer<typeof ImpactReader>;

export const DatasetPlanItem = z.object({
  id: z.string().describe("the dataset's metadata.id"),
  file: z.string(),
  action: z.enum(["create", "update", "unchanged", "invalid"]),
  base: z.number().int().nullable().describe("the version planned against; null: no shared dataset had this id"),
  changes: z.array(ColumnChange).describe("columns added, removed, renamed (through an alias) or changed; a changed source shows as every column changed"),
  readers: z.array(ImpactReader).describe("every dashboard widget, embed, report schedule and alert rule that reads a changed column, with its values before and after"),
  errors: z
    .array(z.object({ file: z.string(), line: z.number().int(), column: z.number().int(), path: z.string(), message: z.string() }))
    .describe("the file's validation problems, and the dashboards the change would break (a removed or renamed column still read, without an alias)"),
});
export type DatasetPlanItem = z.infer<typeof DatasetPlanItem>;

// ---------------------------------------------------------------- the metrics catalog (issue 48 §3)

export const MetricUse = z.object({ dashboard: z.string().describe("slug"), dashboard_name: z.string(), widget: z.string(), published: z.boolean().describe("read by the published version (else only by the draft)") });

export const CatalogMetric = z
  .object({
    dataset: z.string().describe("the shared dataset's id"),
    dataset_name: z.string(),
    id: z.string().describe("the metric's id in its dataset"),
    label: z.string().nullable(),
    type: z.enum(["sql", "formula"]),
    expression: z.string(),
    aliases: z.array(z.string()),
    source: z.string().nullable().describe("the dataset's from, query or kpi"),
    owner: z.string().nullable().describe("the dataset's metadata.owner"),
    dataset_version: z.number().int(),
    certification: z
      .object({ by: z.string(), at: z.iso.datetime() })
      .nullable()
      .describe("set by an admin for this definition; a push that changes the definition removes it"),
    used_by: z.array(MetricUse).describe("the dashboard widgets that read it (drafts and published versions)"),
  })
  .meta({ id: "CatalogMetric" });
export type CatalogMetric = z.infer<typeof CatalogMetric>;

export const MetricParams = z.object({ dataset: z.string().min(1).max(64), metric: z.string().min(1).max(64) });

export const MetricSeries = z
  .object({
    dimension: z.string().nullable().describe("the dimension the values are grouped by: the dataset's first rollup's time dimension, else its first dimension"),
    points: z.array(z.object({ label: z.string(), value: z.number().nullable() })).describe("at most 24, in the dimension's order"),
    error: z.string().nullable(),
  })
  .meta({ id: "MetricSeries" });
export type MetricSeries = z.infer<typeof MetricSeries>;
