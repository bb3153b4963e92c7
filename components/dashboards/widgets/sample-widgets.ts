import fs from "node:fs";
import path from "node:path";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { WidgetManifest } from "@/lib/manifest/schema";

/** The seeded sample dashboard's widgets (docs/manifests/sample-dashboard.yaml), for tests of the helpers against real manifests. */
export function sampleWidget(id: string): WidgetManifest {
  const text = fs.readFileSync(path.join(import.meta.dirname, "../../../docs/manifests/sample-dashboard.yaml"), "utf8");
  const parsed = parseDashboardYaml(text);
  if (!parsed.ok) throw new Error(`sample dashboard does not parse: ${JSON.stringify(parsed.errors[0])}`);
  const widget = parsed.dashboard.widgetsById.get(id);
  if (!widget) throw new Error(`no widget ${id} in the sample dashboard`);
  return widget;
}
