import { z } from "zod";
import { Role } from "@/lib/access/roles";
import { AttributeName, AttributeValues } from "@/lib/access/attributes";
import { echartsOptionProblems } from "./echarts-option-allow-list";
import { optionBoundProblems } from "./echarts-option-bounds";
import { ValueFormat } from "./value-format";
import { isSitePath } from "./site-path";
import { ManifestAlert } from "./alert";
import { FieldId, ManifestId } from "./ids";

/**
 * Dashboard and widget manifests (SPEC §2.1–2.5), version 1.0. These schemas are the
 * single source of the manifest format: validation, TypeScript types and the JSON
 * Schema served to editors all come from here. Objects are strict so a typo in a key
 * is reported instead of silently ignored; `display.echarts.option` is the one open
 * object, checked against the allow-list in ./echarts-option-allow-list.ts.
 */

// Declared apart so the alert language (./alert.ts), which this file imports, can use them too.
export { FieldId, ManifestId };

/** CSS colours are interpolated into styles, so only plain forms are accepted. */
const CssColor = z
  .string()
  .regex(/^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,30}|(rgb|rgba|hsl|hsla)\([0-9.,%\s]+\))$/, "must be a hex colour, a colour name, rgb(...) or hsl(...)")
  .describe("CSS colour");

export const Breakpoint = z.enum(["mobile", "tablet", "desktop", "wide"]);
export type Breakpoint = z.infer<typeof Breakpoint>;

const Metadata = z.strictObject({
  id: ManifestId,
  name: z.string().min(1).max(200).describe("display name"),
  description: z.string().max(2000).optional(),
});

const Version = z.literal("1.0", { error: 'version must be the string "1.0" (quote it in YAML)' });

// ---------------------------------------------------------------- datasets

/**
 * Who may see a dimension or metric (issue 48 §4, docs/datasets.md "Field policies"): hidden from everyone,
 * shown masked (an expression over the row in place of the column), or kept for members holding one of
 * `roles` and every attribute value listed. lib/query/field-policy.ts decides it per viewer.
 */
export const FieldAccess = z
  .strictObject({
    hidden: z.boolean().default(false).describe("never selected for any viewer: widgets needing it say it is hidden"),
    mask: z.string().min(1).max(2000).optional().describe("SQL expression selected instead of the field for viewers the policy does not admit, e.g. regexp_replace(customers.email, '^[^@]+', '***')"),
    roles: z.array(Role).min(1).max(10).optional().describe("roles that see the field as it is; others see its mask, or nothing"),
    attributes: z
      .record(AttributeName, AttributeValues)
      .optional()
      .describe("member attributes that admit a viewer, e.g. { region: [eu] }: the viewer must hold one listed value of every attribute"),
  })
  .describe("field policy: hidden, masked or restricted to roles and member attributes");
export type FieldAccess = z.infer<typeof FieldAccess>;

export const Dimension = z.strictObject({
  id: FieldId,
  column: z.string().min(1).max(2000).describe("fully qualified SQL expression, e.g. orders.order_date"),
  label: z.string().max(200).optional(),
  format: ValueFormat.optional(),
  access: FieldAccess.optional(),
});
export type Dimension = z.infer<typeof Dimension>;

export const Metric = z.strictObject({
  id: FieldId,
  type: z.enum(["sql", "formula"]).describe("sql: aggregate injected into the query; formula: row-level expression evaluated after it"),
  expression: z.string().min(1).max(10_000),
  label: z.string().max(200).optional(),
  format: ValueFormat.optional(),
  access: FieldAccess.optional().describe("field policy; a formula metric also carries the restrictions of every field it reads"),
});
export type Metric = z.infer<typeof Metric>;

export const Rollup = z
  .strictObject({
    name: ManifestId.describe("the rollup's name, unique within its dataset; the editor and query results show it"),
    time_dimension: FieldId.describe("the dimension the rollup buckets by time (a date or timestamp column)"),
    granularity: z.enum(["day", "month"]).describe("bucket size: a widget is answered when its date conditions and time grouping are no finer"),
    location_dimension: FieldId.optional().describe(
      "the dimension holding the location id (orders.location_id, sales_targets.location_id or locations.id); required when the source reads location-scoped rows, so location scopes apply to the rollup",
    ),
    dimensions: z.array(FieldId).max(30).default([]).describe("further dimensions kept: a widget may group and filter by these"),
    measures: z.array(FieldId).min(1).max(50).describe("sql metrics kept: sum, count, min or max of one expression (no distinct counts; ratios are formulas over these)"),
  })
  .describe("a pre-aggregation the engine builds, refreshes and answers widgets from by itself when it gives exactly the tables' answer (docs/rollups.md)");
export type Rollup = z.infer<typeof Rollup>;

export const Dataset = z
  .strictObject({
    id: ManifestId,
    from: z.string().min(1).max(20_000).optional().describe("table or subquery source, e.g. 'orders JOIN locations ON locations.id = orders.location_id'"),
    query: z.string().min(1).max(20_000).optional().describe("arbitrary read-only SQL; its columns are addressed as <dataset id>.<column>"),
    kpi: z.string().min(1).optional().describe("id of a catalog KPI"),
    dimensions: z.array(Dimension).max(50).default([]),
    metrics: z.array(Metric).max(100).default([]),
    order_by: z.array(z.strictObject({ column: FieldId, dir: z.enum(["asc", "desc"]).default("asc") })).max(10).optional(),
    limit: z.int().min(1).max(100_000).optional(),
    rollups: z.array(Rollup).max(10).optional().describe("pre-aggregations of a `from` dataset the engine may answer widgets from"),
  })
  .describe("at most one of from, query, kpi; none means demo data");
export type Dataset = z.infer<typeof Dataset>;

// ---------------------------------------------------------------- shared datasets (issue 48, docs/shared-datasets.md)

const Aliases = z
  .array(FieldId)
  .max(10)
  .optional()
  .describe("former ids of this column: dashboards, alerts and reports naming one keep reading it (a rename that breaks nothing)");

/** A shared dataset's columns may carry the ids they had before a rename. */
export const SharedDimension = Dimension.extend({ aliases: Aliases });
export const SharedMetric = Metric.extend({ aliases: Aliases });

/** A dataset of its own (`kind: dataset`): the fields of an inline dataset, kept once per organization, named by dashboards with `{ ref: <id> }`. */
export const DatasetManifest = z.strictObject({
  version: Version,
  kind: z.literal("dataset"),
  metadata: Metadata.extend({ owner: z.string().min(1).max(200).optional().describe("who answers for its definitions (a name or an address); the metrics catalog shows it") }),
  spec: Dataset.omit({ id: true }).extend({
    dimensions: z.array(SharedDimension).max(50).default([]),
    metrics: z.array(SharedMetric).max(100).default([]),
  }),
});
export type DatasetManifest = z.infer<typeof DatasetManifest>;

export const DatasetRef = z
  .strictObject({ ref: ManifestId.describe("metadata.id of one of the organization's shared datasets; widgets name it by this id") })
  .describe("a shared dataset (kind: dataset), resolved where the manifest is parsed");
export type DatasetRef = z.infer<typeof DatasetRef>;

// ---------------------------------------------------------------- dashboard

const Tab = z.strictObject({
  id: ManifestId,
  name: z.string().min(1).max(200),
  widgets: z.array(ManifestId).default([]),
});

const FilterPanel = z.strictObject({
  position: z.enum(["top", "left"]).default("top"),
  collapsible: z.boolean().default(false),
  defaultCollapsed: z.boolean().default(false),
  width: z.int().min(120).max(800).optional().describe("pixels, for a left panel"),
  gap: z.int().min(0).max(64).optional().describe("pixels between filters"),
  padding: z.int().min(0).max(64).optional(),
  background: CssColor.optional(),
});

const Band = z
  .strictObject({
    widgets: z.array(ManifestId).default([]),
    height: z.int().min(16).max(600).optional().describe("pixels"),
    background: CssColor.optional(),
  })
  .describe("banded section above or below the tabs holding its own text widgets");

/**
 * `public: true` shows the published dashboard to anyone with its link, signed in or not, so a
 * `roles` list that leaves a role out cannot hold at the same time (issue 26: the link overrode it).
 * Decision: a public dashboard must list every role (or omit `roles`); anything else is an error at
 * `platform.public`, and the author chooses which of the two was meant (docs/dashboards-viewer.md).
 */
/**
 * Which report downloads an embed or public page offers (issue 29). Signed-in users always may download what they
 * see (their access decides); a page without a sign-in offers a file only when the author says so, as Metabase's
 * embedding `downloads` and Grafana's sharing options do. Off unless written.
 */
const Downloads = z
  .strictObject({
    pdf: z.boolean().default(false).describe("Download PDF (every tab) on embed and public pages"),
    png: z.boolean().default(false).describe("Download PNG (the tab on screen) on embed and public pages"),
  })
  .describe("report downloads offered on embed and public pages; signed-in users may always download");

const Platform = z
  .strictObject({
    scope: z.literal("org").default("org"),
    roles: z.array(Role).default(["admin", "general_manager", "analyst"]).describe("roles allowed to view"),
    allow_embed: z.boolean().default(false),
    public: z.boolean().default(false).describe("anyone with the link may view the published version; needs every role in roles"),
    downloads: Downloads.default({ pdf: false, png: false }),
  })
  .superRefine((platform, ctx) => {
    if (!platform.public) return;
    const missing = Role.options.filter((role) => !platform.roles.includes(role));
    if (missing.length === 0) return;
    ctx.addIssue({
      code: "custom",
      path: ["public"],
      message: `public: true shows the dashboard to anyone with its link, which platform.roles (${platform.roles.join(", ") || "none"}) would not allow for ${missing.join(", ")}: list every role (${Role.options.join(", ")}) or omit roles, or set public: false`,
    });
  });

// ---------------------------------------------------------------- widget

export const Component = z.enum(["echarts", "kpi", "table", "tabulator", "filter", "text", "image", "markdown"]);
export type Component = z.infer<typeof Component>;

const GridBox = {
  x: z.int().min(0).max(1000),
  y: z.int().min(0).max(10_000),
  w: z.int().min(1).max(1000),
  h: z.int().min(1).max(1000),
};

const Layout = z.strictObject({
  ...GridBox,
  responsive: z.partialRecord(Breakpoint, z.strictObject(GridBox)).optional().describe("per-breakpoint layouts; omitted breakpoints use the base layout"),
});

export const DataKind = z.enum(["dataset", "sql", "kpi", "static", "demo"]);
export type DataKind = z.infer<typeof DataKind>;

const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const WidgetData = z.strictObject({
  kind: DataKind,
  dataset: ManifestId.optional().describe("dataset id, for kind dataset"),
  columns: z.array(FieldId).max(100).optional().describe("dimension or metric ids used"),
  mappings: z.record(z.string(), z.union([FieldId, z.array(FieldId)])).optional().describe("component role -> column, e.g. value, label"),
  query: z.string().min(1).max(20_000).optional().describe("read-only SQL, for kind sql"),
  kpi: z.string().min(1).optional().describe("catalog KPI id, for kind kpi"),
  rows: z.array(z.record(z.string(), Scalar)).max(10_000).optional().describe("inline rows, for kind static"),
  formats: z
    .record(FieldId, ValueFormat)
    .optional()
    .describe("column -> how its numbers are shown, for kinds sql, static and demo (a dataset's columns declare theirs in the dataset)"),
});

export const FilterOperator = z.enum(["eq", "in", "gt", "lt", "gte", "lte", "contains", "date", "between"]);
export type FilterOperator = z.infer<typeof FilterOperator>;

const FilterUse = z.strictObject({
  filter_id: ManifestId.describe("metadata.id of the filter widget"),
  field: FieldId,
  param: z.string().min(1).max(64).optional().describe("key inside an object filter value; the whole value when omitted"),
  operator: FilterOperator,
});

const Binding = z.strictObject({
  target: z.union([z.literal("*"), ManifestId]).describe("widget id, or * for every widget"),
  field: FieldId,
  param: z.string().min(1).max(64).optional(),
  operator: FilterOperator,
});

/**
 * What a click on a chart's data point does (issue 27): set filters of this dashboard from the
 * point's fields (cross-filtering), or open a dashboard or a path on this site with the point's
 * values (drill-through). Field and filter types are checked in ./interactions.ts.
 */
const ClickFilter = z.strictObject({
  filter: ManifestId.describe("metadata.id of a filter widget: of this dashboard for set_filters, of the target dashboard for drill_through"),
  field: FieldId.describe("column of the clicked point whose value the filter takes; it must be among the widget's columns"),
});

const DrillThrough = z
  .strictObject({
    dashboard: z
      .string()
      .regex(/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/, "must be a dashboard slug: lowercase letters, digits and '-'")
      .optional()
      .describe("slug of the dashboard to open; this dashboard when omitted"),
    tab: ManifestId.optional().describe("tab of the target dashboard to open"),
    filters: z.array(ClickFilter).max(20).default([]).describe("filters of the target dashboard set from the clicked point"),
    url: z
      .string()
      .max(2000)
      .regex(/^\/(?![/\\])[^\s]*$/, { message: "must be a path on this site starting with a single /", abort: true })
      .refine(isSitePath, "must stay on this site: resolved and decoded, the path starts with // (another host)")
      .optional()
      .describe("instead of a dashboard: a path on this site, {field} placeholders replaced by the clicked point's values (URL-encoded)"),
  })
  .superRefine((drill, ctx) => {
    if (drill.url === undefined) return;
    for (const key of ["dashboard", "tab"] as const) {
      if (drill[key] !== undefined) ctx.addIssue({ code: "custom", path: [key], message: `a drill-through opens either url or a dashboard: remove ${key} or url` });
    }
    if (drill.filters.length > 0) ctx.addIssue({ code: "custom", path: ["filters"], message: "a url drill-through passes values through its {field} placeholders, not filters" });
  });

const OnClick = z
  .strictObject({
    set_filters: z.array(ClickFilter).min(1).max(20).optional().describe("cross-filter: set these filters of this dashboard; a chip shows them and undoes the click"),
    drill_through: DrillThrough.optional().describe("open a dashboard (or a path on this site) passing the clicked point's values"),
  })
  .superRefine((click, ctx) => {
    if ((click.set_filters === undefined) === (click.drill_through === undefined)) {
      ctx.addIssue({ code: "custom", path: [], message: "on_click does one thing: give set_filters or drill_through" });
    }
  })
  .describe("what a click on a data point of this chart does");
export type OnClick = z.infer<typeof OnClick>;

const FilterOption = z.union([Scalar, z.strictObject({ label: z.string(), value: Scalar })]);

const Display = z.strictObject({
  kpi: z
    .strictObject({
      format: z.enum(["currency", "percent", "number"]).default("number"),
      prefix: z.string().max(20).optional(),
      suffix: z.string().max(20).optional(),
      currency: z.string().regex(/^[A-Z]{3}$/).optional().describe("ISO 4217 code for format currency"),
      decimals: z.int().min(0).max(6).optional(),
      delta: z
        .strictObject({
          column: FieldId.describe("column holding the comparison value"),
          mode: z.enum(["percent", "absolute"]).default("percent"),
          label: z.string().max(100).optional(),
          positive_is_good: z.boolean().default(true),
        })
        .optional(),
    })
    .optional(),
  echarts: z
    .strictObject({
      option: z
        .record(z.string(), z.unknown())
        .superRefine((option, ctx) => {
          for (const problem of [...echartsOptionProblems(option), ...optionBoundProblems(option)]) ctx.addIssue({ code: "custom", message: problem.message, path: problem.path });
        })
        .describe("base ECharts option: allowed keys per chart type, formatters as ECharts templates ({b}, {c}, {@field}), no HTML or script URLs"),
    })
    .optional(),
  filter: z
    .strictObject({
      control: z.enum(["select", "radio", "date", "date_range", "calendar"]),
      label: z.string().max(200).optional(),
      options: z.array(FilterOption).max(1000).optional(),
      default: z.union([Scalar, z.array(Scalar)]).optional(),
      multiple: z.boolean().default(false),
    })
    .optional(),
  table: z.strictObject({ page_size: z.int().min(1).max(1000).default(25) }).optional(),
  tabulator: z
    .strictObject({
      pagination: z.boolean().default(true),
      page_size: z.int().min(1).max(1000).default(25),
      frozen_columns: z.array(FieldId).default([]),
      group_by: FieldId.optional(),
      initial_sort: z.array(z.strictObject({ column: FieldId, dir: z.enum(["asc", "desc"]).default("asc") })).optional(),
      export: z.array(z.enum(["csv", "xlsx"])).default([]),
    })
    .optional(),
  text: z
    .strictObject({
      content: z.string().max(20_000),
      align: z.enum(["left", "center", "right"]).default("left"),
      color: CssColor.optional(),
      size: z.enum(["xs", "sm", "md", "lg", "xl", "2xl"]).default("md"),
    })
    .optional(),
  image: z
    .strictObject({
      url: z
        .string()
        .max(2000)
        .regex(
          /^(https?:\/\/[^/\\\s]|\/(?![/\\]))\S*$/i,
          "must be an http(s) URL or a path starting with a single /: a protocol-relative //host URL would load from another site",
        )
        .describe("an http(s) URL or a path on this site; pages load images only from this site, data: and the organization's image origins"),
      alt: z.string().max(500),
      object_fit: z.enum(["contain", "cover", "fill", "none", "scale-down"]).default("contain"),
    })
    .optional(),
  markdown: z.strictObject({ content: z.string().max(100_000) }).optional(),
});
export type Display = z.infer<typeof Display>;

export const WidgetManifest = z.strictObject({
  version: Version,
  kind: z.literal("widget"),
  metadata: Metadata,
  spec: z.strictObject({
    component: Component,
    layout: Layout,
    data: WidgetData.optional(),
    display: Display.default({}),
    filters: z.array(FilterUse).default([]),
    bindings: z.array(Binding).default([]).describe("filter widgets only"),
    on_click: OnClick.optional(),
  }),
});
export type WidgetManifest = z.infer<typeof WidgetManifest>;

export const DashboardManifest = z.strictObject({
  version: Version,
  kind: z.literal("dashboard"),
  metadata: Metadata,
  platform: Platform.default({ scope: "org", roles: ["admin", "general_manager", "analyst"], allow_embed: false, public: false, downloads: { pdf: false, png: false } }),
  spec: z.strictObject({
    responsive: z.strictObject({ breakpoints: z.array(Breakpoint).default(["mobile", "tablet", "desktop", "wide"]) }).optional(),
    datasets: z.array(z.union([Dataset, DatasetRef])).max(50).default([]).describe("inline datasets, or `{ ref: <id> }` naming a shared dataset"),
    tabs: z.array(Tab).max(50).default([]),
    config: z
      .strictObject({
        filterPanel: FilterPanel.optional(),
        header: Band.optional(),
        footer: Band.optional(),
      })
      .optional(),
    widgets: z.array(WidgetManifest).max(200).optional().describe("widget manifests inline; alternatively as further YAML documents after ---"),
    alerts: z.array(ManifestAlert).max(200).optional().describe("alerts on what widgets show (lib/manifest/alert.ts); a push creates, updates and removes them by id"),
  }),
});
/** A dashboard manifest as written: its datasets inline or `{ ref }`. */
export type WrittenDashboardManifest = z.infer<typeof DashboardManifest>;
/** A dashboard manifest with its shared datasets resolved (lib/manifest/shared-datasets.ts): what everything past parsing reads. */
export type DashboardManifest = Omit<WrittenDashboardManifest, "spec"> & { spec: Omit<WrittenDashboardManifest["spec"], "datasets"> & { datasets: Dataset[] } };

/**
 * A validated dashboard: its manifest, and every widget manifest and dataset by id. What
 * parseDashboardYaml (lib/manifest-check/parse.ts) gives once every check has passed, and what the
 * query engine reads, so it is declared here, below both.
 */
export interface ParsedDashboard {
  manifest: DashboardManifest;
  /** In manifest order: `spec.widgets` entries first, then the widget documents. */
  widgets: WidgetManifest[];
  widgetsById: ReadonlyMap<string, WidgetManifest>;
  datasets: ReadonlyMap<string, Dataset>;
}
