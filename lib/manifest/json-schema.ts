import { z } from "zod";
import { DashboardManifest, DatasetManifest, WidgetManifest } from "./schema";

/**
 * JSON Schemas of the manifest kinds, generated from the zod schemas so they never drift.
 * `io: "input"` describes what an author writes: fields with defaults are optional.
 * Served under /schemas/*.json for `# yaml-language-server: $schema=...` lines.
 */
export function dashboardJsonSchema(): Record<string, unknown> {
  return withId(z.toJSONSchema(DashboardManifest, { io: "input", target: "draft-2020-12" }), "dashboard", "Quarry dashboard manifest 1.0");
}

export function widgetJsonSchema(): Record<string, unknown> {
  return withId(z.toJSONSchema(WidgetManifest, { io: "input", target: "draft-2020-12" }), "widget", "Quarry widget manifest 1.0");
}

export function datasetJsonSchema(): Record<string, unknown> {
  return withId(z.toJSONSchema(DatasetManifest, { io: "input", target: "draft-2020-12" }), "dataset", "Quarry shared dataset manifest 1.0");
}

export const JSON_SCHEMA_FILES = { "dashboard.schema.json": dashboardJsonSchema, "widget.schema.json": widgetJsonSchema, "dataset.schema.json": datasetJsonSchema } as const;

function withId(schema: Record<string, unknown>, name: string, title: string): Record<string, unknown> {
  return { ...schema, $id: `/schemas/${name}.schema.json`, title };
}
