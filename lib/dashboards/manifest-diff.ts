import { parseAllDocuments } from "yaml";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { datasetRefs } from "@/lib/manifest/shared-datasets";
import type { DiffEntry, FieldChange, ManifestDiff } from "./versions-contract";

/**
 * The meaning-level diff of two dashboard manifests (issue 30 §2). Both sides are parsed and validated
 * first, so what is compared is the manifest, not its text: key order, quoting, comments, whitespace,
 * a field written at its default, and whether a widget sits under `spec.widgets` or in a document of
 * its own all make no difference. A side that does not validate is compared as its YAML reads
 * (`unparsed`), so an editor's broken draft still gets a useful diff.
 */

type Plain = unknown;

/** A manifest taken apart into the items a reviewer thinks in. */
interface Model {
  dashboard: Record<string, Plain>;
  widgets: Map<string, Record<string, Plain>>;
  tabs: Map<string, Record<string, Plain>>;
  datasets: Map<string, Record<string, Plain>>;
}

/** The validated manifest with its defaults, or null when it does not validate. */
function parsedModel(specYaml: string): Model | null {
  const result = parseDashboardYaml(specYaml);
  if (!result.ok) return null;
  const { manifest, widgets } = result.dashboard;
  const model = split(toPlain(manifest) as Record<string, Plain>, widgets.map((w) => toPlain(w) as Record<string, Plain>));
  // Shared datasets are compared by the ref that names them (their definitions are planned as datasets of their own).
  for (const ref of datasetRefs(specYaml)) model.datasets.set(ref, { ref });
  return model;
}

/** The YAML as written, for a manifest that does not validate: first document the dashboard, the rest widgets. */
function rawModel(specYaml: string): Model {
  let documents: Plain[] = [];
  try {
    documents = parseAllDocuments(specYaml, { uniqueKeys: false })
      .filter((d) => "contents" in d && d.contents !== null && d.errors.length === 0)
      .map((d) => d.toJS({ maxAliasCount: 200 }));
  } catch {
    documents = [];
  }
  const [first, ...rest] = documents;
  const dashboard = isRecord(first) ? first : {};
  const spec = isRecord(dashboard.spec) ? dashboard.spec : {};
  const inline = Array.isArray(spec.widgets) ? spec.widgets.filter(isRecord) : [];
  return split(dashboard, [...inline, ...rest.filter(isRecord)]);
}

function split(dashboard: Record<string, Plain>, widgets: Record<string, Plain>[]): Model {
  const spec = isRecord(dashboard.spec) ? dashboard.spec : {};
  const { widgets: _inline, tabs, datasets, ...restOfSpec } = spec;
  const byId = (items: Plain, idOf: (item: Record<string, Plain>) => Plain) => {
    const map = new Map<string, Record<string, Plain>>();
    if (Array.isArray(items)) items.filter(isRecord).forEach((item, i) => map.set(String(idOf(item) ?? `#${i + 1}`), item));
    return map;
  };
  return {
    dashboard: { ...dashboard, spec: restOfSpec },
    widgets: byId(widgets, (w) => (isRecord(w.metadata) ? w.metadata.id : undefined)),
    tabs: byId(tabs, (t) => t.id),
    datasets: byId(datasets, (d) => d.id),
  };
}

export function diffManifests(beforeYaml: string, afterYaml: string): ManifestDiff {
  const parsed = [parsedModel(beforeYaml), parsedModel(afterYaml)];
  // Both sides as validated (defaults filled in), or both as written: a mix would report every default as a change.
  const unparsed = parsed.some((m) => m === null);
  const before = { model: unparsed ? rawModel(beforeYaml) : parsed[0]! };
  const after = { model: unparsed ? rawModel(afterYaml) : parsed[1]! };
  const entries: DiffEntry[] = [];

  const dashboardFields = diffValues(before.model.dashboard, after.model.dashboard, "");
  if (dashboardFields.length > 0) entries.push({ section: "dashboard", id: "dashboard", change: "changed", fields: dashboardFields });

  const sectionOf = (widget: Record<string, Plain> | undefined) => (isRecord(widget?.spec) && widget.spec.component === "filter" ? "filters" : "widgets");
  for (const id of unionKeys(before.model.widgets, after.model.widgets)) {
    const a = before.model.widgets.get(id);
    const b = after.model.widgets.get(id);
    const section = sectionOf(b ?? a);
    if (!a) entries.push({ section, id, change: "added", fields: [] });
    else if (!b) entries.push({ section, id, change: "removed", fields: [] });
    else {
      const fields = diffValues(a, b, "");
      if (fields.length === 0) continue;
      const onlyLayout = fields.every((f) => f.path === "spec.layout" || f.path.startsWith("spec.layout.") || f.path.startsWith("spec.layout["));
      entries.push({ section, id, change: onlyLayout ? "moved" : "changed", fields });
    }
  }
  for (const [section, key] of [["tabs", "tabs"], ["datasets", "datasets"]] as const) {
    for (const id of unionKeys(before.model[key], after.model[key])) {
      const a = before.model[key].get(id);
      const b = after.model[key].get(id);
      if (!a) entries.push({ section, id, change: "added", fields: [] });
      else if (!b) entries.push({ section, id, change: "removed", fields: [] });
      else {
        const fields = diffValues(a, b, "");
        if (fields.length > 0) entries.push({ section, id, change: "changed", fields });
      }
    }
  }
  // Tab order is what a viewer sees first; a reorder alone is a change of the dashboard.
  const order = (m: Model) => [...m.tabs.keys()];
  const [beforeOrder, afterOrder] = [order(before.model), order(after.model)];
  const sameMembers = beforeOrder.length === afterOrder.length && beforeOrder.every((id) => afterOrder.includes(id));
  if (sameMembers && beforeOrder.join("\u0000") !== afterOrder.join("\u0000")) {
    entries.push({ section: "tabs", id: "(order)", change: "changed", fields: [{ path: "order", before: beforeOrder, after: afterOrder }] });
  }

  const count = (change: DiffEntry["change"]) => entries.filter((e) => e.change === change).length;
  return {
    changed: entries.length > 0,
    summary: { added: count("added"), removed: count("removed"), changed: count("changed"), moved: count("moved") },
    entries,
    unparsed,
  };
}

/**
 * Field-level differences. Objects compare by key whatever their order; lists of objects that all
 * carry an `id` (dimensions, metrics, tabs' entries) compare by id, other lists by position.
 */
function diffValues(a: Plain, b: Plain, path: string): FieldChange[] {
  if (isRecord(a) && isRecord(b)) {
    const out: FieldChange[] = [];
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const sub = path ? `${path}.${key}` : key;
      if (!(key in b) || b[key] === undefined) {
        if (a[key] !== undefined) out.push({ path: sub, before: a[key] });
      } else if (!(key in a) || a[key] === undefined) out.push({ path: sub, after: b[key] });
      else out.push(...diffValues(a[key], b[key], sub));
    }
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (keyedById(a) && keyedById(b)) {
      const [ma, mb] = [new Map(a.map((x) => [String(x.id), x])), new Map(b.map((x) => [String(x.id), x]))];
      const out: FieldChange[] = [];
      for (const id of unionKeys(ma, mb)) {
        const sub = `${path}[id=${id}]`;
        if (!mb.has(id)) out.push({ path: sub, before: ma.get(id) });
        else if (!ma.has(id)) out.push({ path: sub, after: mb.get(id) });
        else out.push(...diffValues(ma.get(id), mb.get(id), sub));
      }
      return out;
    }
    if (a.length === b.length) return a.flatMap((x, i) => diffValues(x, b[i], `${path}[${i}]`));
    return [{ path, before: a, after: b }];
  }
  return Object.is(a, b) ? [] : [{ path, before: a, after: b }];
}

function keyedById(list: Plain[]): list is Record<string, Plain>[] {
  return list.length > 0 && list.every((x) => isRecord(x) && (typeof x.id === "string" || typeof x.id === "number"));
}

function unionKeys<K>(a: ReadonlyMap<K, unknown>, b: ReadonlyMap<K, unknown>): K[] {
  return [...new Set([...a.keys(), ...b.keys()])];
}

function isRecord(value: Plain): value is Record<string, Plain> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** A JSON-like copy (zod output may hold Dates or undefined members): what the diff and its answer carry. */
function toPlain(value: Plain): Plain {
  return JSON.parse(JSON.stringify(value ?? null)) as Plain;
}
