import "server-only";
import fs from "node:fs/promises";
import path from "node:path";
import type { Principal } from "@/lib/access/roles";
import { findOrganization } from "@/lib/auth/directory";
import { withTenant } from "@/lib/db/tenant";
import type { TenantScope } from "@/lib/db/tenant";
import { Invalid, Unavailable, forbidden, notFound } from "@/lib/errors";
import { invoke } from "@/lib/operation";
import type { WidgetResult } from "@/lib/dashboards/contract";
import { humanize } from "@/lib/dashboards/format";
import type { EmbedGrant } from "@/lib/dashboards/policy";
import { queryDashboard } from "@/lib/dashboards/operations";
import { UNAVAILABLE_TO_ANONYMOUS, UNPASSABLE_TO_VIEWERS, grantForEmbed, grantForPrincipal, grantForPublic, isEditor, type GrantedDashboard } from "@/lib/dashboards/policy";
import { lockedOver, queryGranted } from "@/lib/dashboards/query";
import { kpiFigure, tableCells } from "@/lib/dashboards/widget-figures";
import { dataWidgetIds, pageRegions, viewColumnFormats, type ViewManifest } from "@/lib/dashboards/wiring";
import { describeAppliedDate, effectiveValue, filterOptions, selectedValues } from "@/lib/dashboards/filter-values";
import { GRID_COLUMNS } from "@/lib/manifest/grid";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { guardedFetch } from "@/lib/notifications/transports/url-guard";
import { imageOriginsOf } from "@/lib/organizations/settings";
import { QueueDeadline } from "@/lib/query/fair-queue";
import { fitForPrint } from "./chart-svg";
import { drawPool } from "./draw/pool";
import type { Block, PageSpec, PlacedBlock, ReportModel } from "./layout";
import { DEFAULT_REPORT_LIMITS, type ReportLimits, reportQueue } from "./limits";
import { markdownParagraphs } from "./markdown";

/**
 * A dashboard as a PDF or PNG report, rendered on the server without a browser (issue 29):
 * the version the access policy grants the principal (the published one; the draft for an
 * editor who asks), its data through the same query service, result cache and row-level
 * security as the viewer, its charts built by the viewer's option builder and drawn by ECharts
 * as vectors, its figures formatted by the viewer's formatters. Data and images load here; the
 * drawing (layout, charts, PDF, PNG) runs in a draw process with hard time and memory limits
 * (draw/pool.ts), handed the report as plain data. docs/reports.md.
 */

export type Paper = "a4" | "letter";
export type Orientation = "portrait" | "landscape";

export interface ReportRequest {
  /** The dashboard's id or slug. */
  dashboardId: string;
  /** Filter widget id → value, as the viewer's URL and `…/query` take them; absent filters use their defaults. */
  filters: Record<string, unknown>;
  format: "pdf" | "png";
  /** PDF page size and orientation (A4 portrait by default). */
  paper?: Paper;
  orientation?: Orientation;
  /** PDF: only this tab (every tab, each a section, by default). PNG: the tab drawn (the first by default). */
  tab?: string;
  /** PNG width in pixels (1,200 by default, 320–4,000). */
  width?: number;
  /** "draft" for editors, as in the viewer; the published version otherwise. */
  version?: "published" | "draft";
  /** PNG of this one widget alone, full width (an alert's picture); the whole tab otherwise. */
  widget?: string;
}

export interface RenderedReport {
  bytes: Uint8Array;
  contentType: string;
  filename: string;
  pages: number;
  /** What the limits left out, in words (also printed in the report). */
  cut: string[];
}

const PAPER: Record<Paper, [number, number]> = { a4: [595.28, 841.89], letter: [612, 792] };
const ROLE_NAMES: Record<Principal["role"], string> = { admin: "Admin", general_manager: "General manager", analyst: "Analyst" };
const TEXT_SIZES = { xs: 7.5, sm: 8.5, md: 10, lg: 12, xl: 15, "2xl": 18 } as const;
const IMAGE_TYPES = new Set(["image/png", "image/jpeg"]);

/**
 * Where a report's version and data come from: a signed-in principal, an embed grant or a public link. Each reads
 * as its own query does (`…/query`; `/embed/query` and `/public/query` through queryGranted on the same grant), so a
 * report never shows more than the same caller's page.
 */
interface ReportSource {
  granted: GrantedDashboard;
  /** What a stored manifest that no longer validates tells the caller (as the matching query does). */
  unpassable: () => Error;
  /** Filter values the source fixes (an embed's locked filters): they win over the request's. */
  locked: Record<string, unknown>;
  query: (filters: Record<string, unknown>, widgetIds: string[], version: number | "draft") => Promise<{ widgets: unknown }>;
  /** Who the figures are for, in words ("General manager, locations …"). */
  scopeLine: () => Promise<string>;
}

/** One organization's renders wait their turn (FairQueue); too long a wait is 503 with Retry-After. */
async function queued(orgId: string, work: () => Promise<RenderedReport>): Promise<RenderedReport> {
  try {
    return await reportQueue.get().run(orgId, work);
  } catch (error) {
    if (error instanceof QueueDeadline) throw new Unavailable("Too many reports are being rendered for this organization; try again shortly", 30);
    throw error;
  }
}

/**
 * Renders a report as `principal` sees the dashboard. Throws what `…/query` throws for the same
 * caller (404 hidden or missing, 422/503 for a manifest that no longer validates) and 503 with
 * Retry-After when the organization's render line is full for too long.
 */
export async function renderDashboardReport(principal: Principal, request: ReportRequest, limits: ReportLimits = DEFAULT_REPORT_LIMITS): Promise<RenderedReport> {
  return queued(principal.orgId, async () => {
    const wanted = request.version === "draft" && isEditor(principal) ? "draft" : "published";
    const granted = await grantForPrincipal(principal, request.dashboardId, wanted);
    const source: ReportSource = {
      granted,
      unpassable: () => (isEditor(principal) && !granted.parsed.ok ? new Invalid(granted.parsed.errors) : new Unavailable(UNPASSABLE_TO_VIEWERS)),
      locked: {},
      query: (filters, widgetIds, version) => invoke(queryDashboard, principal, { params: { id: granted.dashboardId }, body: { filters, widget_ids: widgetIds, version } }),
      scopeLine: () => scopeLine(ROLE_NAMES[principal.role], principal, principal.orgName),
    };
    return render(source, request, limits);
  });
}

/** Which downloads a manifest offers on pages without a sign-in (`platform.downloads`; none when it no longer validates). */
function offeredDownloads(granted: GrantedDashboard): { pdf: boolean; png: boolean } {
  return granted.parsed.ok ? granted.parsed.value.manifest.platform.downloads : { pdf: false, png: false };
}

function mustOffer(offered: { pdf: boolean; png: boolean }, format: "pdf" | "png") {
  if (!offered[format]) throw forbidden(`This dashboard does not offer ${format.toUpperCase()} downloads here: its manifest's platform.downloads.${format} is not true`);
}

/**
 * An embed's report: the version and location scope of its grant, its locked filters over the request's, read through
 * the embed's own query. Only a format the shown version's manifest offers (`platform.downloads`) and the dashboard's
 * current published manifest still offers (403 otherwise: turning downloads off and publishing stops every link's,
 * as `allow_embed` stops the links themselves).
 */
export async function renderEmbedReport(grant: EmbedGrant, request: Omit<ReportRequest, "dashboardId" | "version">, limits: ReportLimits = DEFAULT_REPORT_LIMITS): Promise<RenderedReport> {
  const granted = await grantForEmbed(grant);
  if (!granted.parsed.ok) throw new Unavailable(UNAVAILABLE_TO_ANONYMOUS);
  mustOffer(offeredDownloads(granted), request.format);
  mustOffer(grant.downloads, request.format);
  const org = await findOrganization(grant.orgId);
  return queued(grant.orgId, () =>
    render(
      {
        granted,
        unpassable: () => new Unavailable(UNAVAILABLE_TO_ANONYMOUS),
        locked: grant.lockedFilters,
        // The embed's own query on the grant already checked (filters arrive with its locks over them).
        query: (filters, widgetIds) => queryGranted(granted, "anonymous", filters, widgetIds),
        scopeLine: () => scopeLine("Embedded dashboard", granted.scope, org?.name ?? ""),
      },
      { ...request, dashboardId: grant.dashboardId },
      limits,
    ),
  );
}

/** A public dashboard's report (`platform.public`): 404 as its page, 403 for a format its manifest does not offer. */
export async function renderPublicReport(orgSlug: string, dashboardSlug: string, request: Omit<ReportRequest, "dashboardId" | "version">, limits: ReportLimits = DEFAULT_REPORT_LIMITS): Promise<RenderedReport> {
  const granted = await grantForPublic(orgSlug, dashboardSlug);
  if (!granted) throw notFound("Dashboard");
  if (!granted.parsed.ok) throw new Unavailable(UNAVAILABLE_TO_ANONYMOUS);
  mustOffer(offeredDownloads(granted), request.format);
  const org = await findOrganization(granted.scope.orgId);
  return queued(granted.scope.orgId, () =>
    render(
      {
        granted,
        unpassable: () => new Unavailable(UNAVAILABLE_TO_ANONYMOUS),
        locked: {},
        query: (filters, widgetIds) => queryGranted(granted, "anonymous", filters, widgetIds),
        scopeLine: () => scopeLine("Public dashboard", granted.scope, org?.name ?? ""),
      },
      { ...request, dashboardId: granted.dashboardId },
      limits,
    ),
  );
}

async function render(source: ReportSource, request: ReportRequest, limits: ReportLimits): Promise<RenderedReport> {
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
  const shownIds = [...new Set(regions.flatMap((r) => [...r.header, ...r.filters, ...r.grid, ...r.footer]))];

  const now = new Date();
  const [answer, org] = await Promise.all([source.query(filters, dataWidgetIds(view, shownIds), granted.version), findOrganization(granted.scope.orgId)]);
  const timeZone = org?.timeZone ?? "UTC";
  const results = answer.widgets as Record<string, WidgetResult>;
  const cut: string[] = [];

  const filterLines = describeFilters([...new Set(regions.flatMap((r) => r.filters))].map((id) => byId.get(id)!), filters, results, timeZone, now);
  const images = await loadImages(granted.scope.orgId, shownIds.map((id) => byId.get(id)!).filter((w) => w.spec.component === "image"));
  const placed = (w: WidgetManifest) => (single ? { ...w.spec.layout, x: 0, y: 0, w: GRID_COLUMNS } : w.spec.layout);
  const blockOf = (w: WidgetManifest): PlacedBlock => ({ id: w.metadata.id, title: w.spec.component === "text" ? undefined : w.metadata.name, ...placed(w), block: widgetBlock(view, w, results[w.metadata.id], images, limits, cut) });
  const band = (ids: string[], config: { background?: string } | undefined) => (ids.length > 0 ? { blocks: ids.map((id) => byId.get(id)!).map(blockOf), background: config?.background } : undefined);
  const model: ReportModel = {
    title: granted.name,
    lines: [
      `Snapshot: ${snapshotTime(now, timeZone)}${granted.version === "draft" ? " · Draft (not published)" : ` · Version ${granted.version}`}`,
      `Filters: ${filterLines.length > 0 ? filterLines.join(" · ") : "none"}`,
      `Scope: ${await source.scopeLine()}`,
    ],
    header: band(regions[0].header, view.manifest.spec.config?.header),
    footer: band(regions[0].footer, view.manifest.spec.config?.footer),
    sections: regions.map((r) => ({ name: tabs.length > 1 ? (r.tabs.find((t) => t.id === r.tab)?.name ?? "") : "", blocks: r.grid.map((id) => byId.get(id)!).map(blockOf) })),
  };

  const base = `${granted.slug}-${now.toISOString().slice(0, 10)}`;
  const [short, long] = PAPER[request.paper ?? "a4"];
  const landscape = request.orientation === "landscape";
  const page: PageSpec =
    request.format === "png" ? { width: Math.round(Math.min(4000, Math.max(320, request.width ?? 1200))), height: null, margin: 24 } : { width: landscape ? long : short, height: landscape ? short : long, margin: 32 };
  const drawn = await drawPool.get().draw({ model, format: request.format, page, maxPages: limits.maxPages, maxPngHeight: limits.maxPngHeight, renderMs: limits.renderMs, info: { title: granted.name, author: org?.name ?? "" }, cut });
  return { ...drawn, contentType: request.format === "png" ? "image/png" : "application/pdf", filename: `${base}.${request.format}` };
}

/** The snapshot time in the organization's zone: "Nov 26, 2026, 7:05 AM (Europe/Berlin)". */
function snapshotTime(now: Date, timeZone: string): string {
  return `${new Intl.DateTimeFormat("en-US", { timeZone, dateStyle: "medium", timeStyle: "short" }).format(now)} (${timeZone})`;
}

/** Whose view the figures are: the role (or the kind of link), and the locations when the scope names some. */
async function scopeLine(who: string, scope: TenantScope, orgName: string): Promise<string> {
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
        const note = `First ${shown.length.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} rows.`;
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

/**
 * Images the viewer would load: a path on this site (read from the app's public folder) or an
 * address on one of the organization's image origins, fetched through the webhook URL guard
 * (public addresses only, 1 MB, no redirects). PNG and JPEG only (what a PDF can hold); any
 * other image is named by its alt text instead.
 */
async function loadImages(orgId: string, widgets: WidgetManifest[]): Promise<Map<string, Block>> {
  const out = new Map<string, Block>();
  if (widgets.length === 0) return out;
  const origins = new Set(await imageOriginsOf(orgId));
  await Promise.all(
    widgets.map(async (w) => {
      const image = w.spec.display.image;
      if (!image) return;
      const loaded = await loadImage(image.url, origins).catch(() => null);
      out.set(
        w.metadata.id,
        !loaded ? { kind: "message", text: `Image not included: ${image.alt}` } : "svg" in loaded ? { kind: "vector", alt: image.alt, svg: loaded.svg } : { kind: "image", alt: image.alt, bytes: loaded.bytes, mime: loaded.mime, fit: image.object_fit },
      );
    }),
  );
  return out;
}

async function loadImage(url: string, origins: ReadonlySet<string>): Promise<{ bytes: Uint8Array; mime: "image/png" | "image/jpeg" } | { svg: string } | null> {
  let bytes: Uint8Array;
  if (url.startsWith("/")) {
    const root = path.join(process.cwd(), "public");
    const file = path.join(root, decodeURIComponent(new URL(url, "http://local").pathname));
    if (!file.startsWith(root + path.sep)) return null;
    bytes = new Uint8Array(await fs.readFile(file));
    // SVG only from this site's own files: a remote one could point svg-to-pdfkit at files on this server.
    const text = Buffer.from(bytes.subarray(0, 512)).toString("utf8").trimStart();
    if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/.test(text)) return { svg: fitForPrint(Buffer.from(bytes).toString("utf8").replace(/^[\s\S]*?(?=<svg[\s>])/, "")) };
  } else {
    const target = new URL(url);
    if (!origins.has(target.origin)) return null;
    const response = await guardedFetch(target, { signal: AbortSignal.timeout(5_000) });
    if (!response.ok) return null;
    bytes = new Uint8Array(await response.arrayBuffer());
  }
  const mime = bytes[0] === 0x89 && bytes[1] === 0x50 ? "image/png" : bytes[0] === 0xff && bytes[1] === 0xd8 ? "image/jpeg" : null;
  return mime && IMAGE_TYPES.has(mime) ? { bytes, mime } : null;
}
