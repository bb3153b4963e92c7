import "server-only";
import type { TenantScope } from "@/lib/db/tenant";
import { withTenant } from "@/lib/db/tenant";
import { findOrganization } from "@/lib/auth/directory";
import { Invalid } from "@/lib/errors";
import type { WidgetResult } from "@/lib/dashboards/contract";
import { DEFAULT_CURRENCY, formatInstant, formatNumber, humanize } from "@/lib/dashboards/format";
import type { GrantedDashboard } from "@/lib/dashboards/policy";
import { lockedOver } from "@/lib/dashboards/query";
import { kpiFigure, tableCells } from "@/lib/dashboards/widget-figures";
import { dataWidgetIds, orgView, pageRegions, viewColumnFormats, visibleWidgetIds, type ViewManifest } from "@/lib/dashboards/wiring";
import { describeAppliedDate, effectiveValue, filterOptions, selectedValues } from "@/lib/dashboards/filter-values";
import { GRID_COLUMNS } from "@/lib/manifest/grid";
import type { WidgetManifest } from "@/lib/manifest/schema";
import type { Block, PlacedBlock, ReportModel } from "./layout";
import type { ReportLimits } from "./limits";
import { markdownParagraphs } from "./markdown";
import { loadImages } from "./report-images";

/**
 * What a report shows, apart from how it is drawn and paged (report-page.ts, draw/): the version the
 * policy granted, its data through the caller's own query, each widget's figures by the viewer's own
 * functions (regions and visible widgets of wiring.ts, the embed-lock merge of query.ts, the figures
 * of widget-figures.ts, the declared formats of viewColumnFormats), as plain data for the draw process.
 */

/**
 * Where a report's version and data come from: a signed-in principal, an embed grant or a public link. Each reads
 * as its own query does (`…/query`; `/embed/query` and `/public/query` through queryGranted on the same grant), so a
 * report never shows more than the same caller's page.
 */
export interface ReportSource {
  granted: GrantedDashboard;
  /** What a stored manifest that no longer validates tells the caller (as the matching query does). */
  unpassable: () => Error;
  /** Filter values the source fixes (an embed's locked filters): they win over the request's. */
  locked: Record<string, unknown>;
  query: (filters: Record<string, unknown>, widgetIds: string[], version: number | "draft") => Promise<{ widgets: unknown }>;
  /** Who the figures are for, in words ("General manager, locations …"). */
  scopeLine: () => Promise<string>;
}

export interface ModelRequest {
  /** Filter widget id → value, as the viewer's URL and `…/query` take them; absent filters use their defaults. */
  filters: Record<string, unknown>;
  format: "pdf" | "png";
  /** PDF: only this tab (every tab, each a section, by default). PNG: the tab drawn (the first by default). */
  tab?: string;
  /** PNG of this one widget alone, full width (an alert's picture); the whole tab otherwise. */
  widget?: string;
}

export interface BuiltModel {
  model: ReportModel;
  /** What the limits left out already (table rows), in words. */
  cut: string[];
  /** The organization's name (the PDF's author). */
  organizationName: string;
}

const TEXT_SIZES = { xs: 7.5, sm: 8.5, md: 10, lg: 12, xl: 15, "2xl": 18 } as const;

/** The report's model as of `now`: 422 for a tab or widget the dashboard does not have, the source's refusal for a manifest that no longer validates. */
export async function reportModel(source: ReportSource, request: ModelRequest, limits: ReportLimits, now: Date): Promise<BuiltModel> {
  const { granted } = source;
  if (!granted.parsed.ok) throw source.unpassable();
  const filters = lockedOver(source.locked, request.filters);
  const view: ViewManifest = { manifest: granted.parsed.value.manifest, widgets: granted.parsed.value.widgets };
  const byId = new Map(view.widgets.map((w) => [w.metadata.id, w]));
  const tabs = view.manifest.spec.tabs;
  const pickedTab = request.tab !== undefined ? tabs.find((t) => t.id === request.tab) : undefined;
  if (request.tab !== undefined && tabs.length > 0 && !pickedTab) throw new Invalid([{ loc: ["query", "tab"], msg: `No tab '${request.tab}' in this dashboard (tabs: ${tabs.map((t) => t.id).join(", ")})`, type: "value_error" }]);
  const single = request.widget !== undefined ? byId.get(request.widget) : undefined;
  if (request.widget !== undefined && (!single || dataWidgetIds(view, [request.widget]).length === 0)) {
    throw new Invalid([{ loc: ["body", "widget"], msg: `No data widget '${request.widget}' in this dashboard`, type: "value_error" }]);
  }
  // One widget is drawn under the filters of its own tab.
  const widgetTab = single ? tabs.find((t) => t.widgets.includes(single.metadata.id)) : undefined;
  const sectionTabs: (string | null)[] = tabs.length === 0 ? [null] : request.format === "png" ? [(pickedTab ?? widgetTab ?? tabs[0]).id] : pickedTab ? [pickedTab.id] : tabs.map((t) => t.id);
  // One widget: its own section, as wide as the page, and the filters that apply still described.
  const regions = sectionTabs.map((tab) => {
    const region = pageRegions(view, tab);
    return single ? { ...region, header: [], footer: [], grid: [single.metadata.id] } : region;
  });
  const shownIds = [...new Set(regions.flatMap(visibleWidgetIds))];

  const [answer, org] = await Promise.all([source.query(filters, dataWidgetIds(view, shownIds), granted.version), findOrganization(granted.scope.orgId)]);
  const timeZone = org?.timeZone ?? "UTC";
  // Money without a declared code is drawn in the organization's currency (the layout above does not depend on it).
  const drawn = orgView(granted.parsed.value, org?.currency ?? DEFAULT_CURRENCY);
  const drawnById = new Map(drawn.widgets.map((w) => [w.metadata.id, w]));
  const results = answer.widgets as Record<string, WidgetResult>;
  const cut: string[] = [];

  const filterLines = describeFilters([...new Set(regions.flatMap((r) => r.filters))].map((id) => byId.get(id)!), filters, results, timeZone, now);
  const images = await loadImages(granted.scope.orgId, shownIds.map((id) => byId.get(id)!).filter((w) => w.spec.component === "image"));
  const placed = (w: WidgetManifest) => (single ? { ...w.spec.layout, x: 0, y: 0, w: GRID_COLUMNS } : w.spec.layout);
  const blockOf = (w: WidgetManifest): PlacedBlock => ({ id: w.metadata.id, title: w.spec.component === "text" ? undefined : w.metadata.name, ...placed(w), block: widgetBlock(drawn, drawnById.get(w.metadata.id) ?? w, results[w.metadata.id], images, limits, cut) });
  const band = (ids: string[], config: { background?: string } | undefined) => (ids.length > 0 ? { blocks: ids.map((id) => byId.get(id)!).map(blockOf), background: config?.background } : undefined);
  const model: ReportModel = {
    title: granted.name,
    lines: [
      `Snapshot: ${formatInstant(now, timeZone)}${granted.version === "draft" ? " · Draft (not published)" : ` · Version ${granted.version}`}`,
      `Filters: ${filterLines.length > 0 ? filterLines.join(" · ") : "none"}`,
      `Scope: ${await source.scopeLine()}`,
    ],
    header: band(regions[0].header, view.manifest.spec.config?.header),
    footer: band(regions[0].footer, view.manifest.spec.config?.footer),
    sections: regions.map((r) => ({ name: tabs.length > 1 ? (r.tabs.find((t) => t.id === r.tab)?.name ?? "") : "", blocks: r.grid.map((id) => byId.get(id)!).map(blockOf) })),
  };
  return { model, cut, organizationName: org?.name ?? "" };
}

/** Whose view the figures are: the role (or the kind of link), and the locations when the scope names some. */
export async function scopeLine(who: string, scope: TenantScope, orgName: string): Promise<string> {
  if (!scope.locationIds || scope.locationIds.length === 0) return `${who}, all locations of ${orgName}`;
  const ids = [...scope.locationIds];
  const rows = await withTenant(scope, (tx) => tx.location.findMany({ where: { id: { in: ids } }, select: { name: true }, orderBy: { code: "asc" } }));
  return `${who}, ${rows.length === 1 ? "location" : "locations"} ${rows.map((r) => r.name).join(", ")}`;
}

/** "Order date: last month (Sun, 1 Oct 2026 – …)", "Locations: all": each filter's value as the viewer shows it. */
function describeFilters(widgets: WidgetManifest[], filters: Record<string, unknown>, results: Record<string, WidgetResult>, timeZone: string, now: Date): string[] {
  return widgets.map((w) => {
    const display = w.spec.display.filter;
    const label = display?.label ?? w.metadata.name;
    const value = effectiveValue(filters[w.metadata.id], display);
    if (display && ["date", "date_range", "calendar"].includes(display.control)) return `${label}: ${describeAppliedDate(value, timeZone, now)}`;
    const selected = selectedValues(value);
    if (selected.length === 0) return `${label}: all`;
    const result = results[w.metadata.id];
    const options = filterOptions(display, w.spec.data?.mappings, result?.columns ?? [], result?.rows ?? []);
    const labels = selected.map((v) => options.find((o) => o.value === v)?.label ?? (v === null ? "(none)" : String(v)));
    return `${label}: ${labels.join(", ")}`;
  });
}

function widgetBlock(view: ViewManifest, w: WidgetManifest, result: WidgetResult | undefined, images: Map<string, Block>, limits: ReportLimits, cut: string[]): Block {
  const display = w.spec.display;
  switch (w.spec.component) {
    case "text":
      return { kind: "text", paragraphs: markdownParagraphs(display.text?.content ?? ""), align: display.text?.align ?? "left", color: display.text?.color, size: TEXT_SIZES[display.text?.size ?? "md"] };
    case "markdown":
      return { kind: "text", paragraphs: markdownParagraphs(display.markdown?.content ?? ""), align: "left", size: 9 };
    case "image":
      return images.get(w.metadata.id) ?? { kind: "message", text: `Image: ${display.image?.alt ?? w.metadata.name}` };
    case "filter":
      return { kind: "message", text: "" };
    default:
      break;
  }
  if (!result) return { kind: "message", text: "No data" };
  if (result.error) return { kind: "message", text: typeof result.error.detail === "string" ? result.error.detail : "This widget's data could not be computed" };
  const formats = viewColumnFormats(view, w);
  switch (w.spec.component) {
    case "kpi": {
      const figure = kpiFigure(w, result.columns, result.rows, formats);
      if (!figure.delta) return { kind: "kpi", value: figure.text };
      const { text, label, direction, tone } = figure.delta;
      return { kind: "kpi", value: figure.text, delta: { text: `${text}${label ? ` ${label}` : ""}`, direction, tone, comparison: figure.comparison ? `(${figure.comparison})` : undefined } };
    }
    case "echarts": {
      if (result.rows.length === 0) return { kind: "message", text: "No data for these filters" };
      // Plain data: the draw process builds the option for the box the chart gets.
      return { kind: "chart", base: display.echarts?.option, mappings: w.spec.data?.mappings, data: { columns: result.columns, rows: result.rows }, formats };
    }
    case "table":
    case "tabulator": {
      const cells = tableCells(result.columns, result.rows, formats);
      const shown = result.rows.slice(0, limits.maxTableRows);
      const total = result.rows.length;
      const notes: string[] = [];
      if (total > shown.length) {
        const note = `First ${formatNumber(shown.length)} of ${formatNumber(total)} rows.`;
        notes.push(note);
        cut.push(`${w.metadata.name}: ${note}`);
      }
      if (result.truncated) notes.push("The data source returned its row limit; more rows exist.");
      return {
        kind: "table",
        columns: cells.names.map(humanize),
        numeric: cells.names.map((c) => cells.numeric.has(c)),
        rows: shown.map((row) => cells.names.map((c) => cells.cell(c, row[c]))),
        total,
        ...(notes.length > 0 ? { note: notes.join(" ") } : {}),
      };
    }
    default:
      return { kind: "message", text: "" };
  }
}
