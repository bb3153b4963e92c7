import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { Role } from "@/lib/access/roles";
import { MemberAttributes } from "@/lib/access/attributes";
import { pageOf, pageQuery } from "@/lib/pagination";

/** The roles that edit dashboards (drafts, publishing, embeds, versions): the endpoints' access and the policy's isEditor. */
export const EDITORS = ["admin", "general_manager"] as const satisfies readonly Role[];

export const Slug = z
  .string()
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/, "lowercase letters, digits and '-', 1-64 characters, not starting or ending with '-'")
  .describe("URL name, unique in the organization");

export const DashboardWidgetSummary = z.object({
  id: z.string(),
  name: z.string(),
  component: z.string(),
});

export const DashboardRecord = z
  .object({
    id: z.string(),
    org_id: z.string(),
    name: z.string(),
    slug: z.string(),
    status: z.enum(["draft", "published"]).describe("published once any version has been published"),
    draft_revision: z.number().int().describe("increments on every edit of the draft"),
    published_version: z.number().int().nullable().describe("the version viewers and embeds see"),
    has_unpublished_changes: z.boolean(),
    platform: z.object({ roles: z.array(Role), allow_embed: z.boolean(), public: z.boolean() }).describe("from the manifest viewers see"),
    widgets: z.array(DashboardWidgetSummary).describe("validated widgets of the draft (editors) or the published version (viewers)"),
    tabs: z.array(z.object({ id: z.string(), name: z.string(), widgets: z.array(z.string()) })),
    spec_yaml: z.string().optional().describe("the draft manifest (editors) or the published one (viewers); omitted in lists"),
    created_by: z.string(),
    updated_by: z.string(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    published_at: z.iso.datetime().nullable(),
  })
  .meta({ id: "Dashboard" });
export type DashboardRecord = z.infer<typeof DashboardRecord>;

const IdParams = z.object({ id: z.string().min(1).max(200).describe("dashboard id, or its slug") });

export const CreateDashboardBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    slug: Slug,
    spec_yaml: z.string().min(1).max(1_000_000).describe("dashboard manifest, then its widget manifests, separated by ---"),
  })
  .meta({ id: "CreateDashboard" });

export const UpdateDashboardBody = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    slug: Slug.optional(),
    spec_yaml: z.string().min(1).max(1_000_000).optional(),
  })
  .refine((b) => b.name !== undefined || b.slug !== undefined || b.spec_yaml !== undefined, "give at least one of name, slug, spec_yaml")
  .meta({ id: "UpdateDashboard" });

export const createDashboard = defineEndpoint({
  method: "post",
  path: "/api/v1/custom-dashboards",
  summary: "Create a dashboard from a YAML manifest",
  description: "Validates the manifest; every problem comes back at once as a 422 item with its line and column. A duplicate slug is 409.",
  tags: ["Dashboards"],
  access: EDITORS,
  body: CreateDashboardBody,
  response: DashboardRecord,
  status: 201,
  errors: [409],
});

export const ListDashboardsQuery = pageQuery.extend({ status: z.enum(["draft", "published"]).optional() });

export const listDashboards = defineEndpoint({
  method: "get",
  path: "/api/v1/custom-dashboards",
  summary: "List the dashboards the caller may see",
  description: "Editors (admin, general_manager) see every dashboard of the organization; other roles see published dashboards whose platform.roles include theirs. Most recently edited first.",
  tags: ["Dashboards"],
  access: "user",
  query: ListDashboardsQuery,
  response: pageOf(DashboardRecord).meta({ id: "DashboardList" }),
});

export const getDashboard = defineEndpoint({
  method: "get",
  path: "/api/v1/custom-dashboards/{id}",
  summary: "Get one dashboard by id or slug",
  tags: ["Dashboards"],
  access: "user",
  params: IdParams,
  response: DashboardRecord,
  errors: [404],
});

export const updateDashboard = defineEndpoint({
  method: "put",
  path: "/api/v1/custom-dashboards/{id}",
  summary: "Edit the draft (name, slug, manifest)",
  description: "Published versions are not touched; publish again to show the changes.",
  tags: ["Dashboards"],
  access: EDITORS,
  params: IdParams,
  body: UpdateDashboardBody,
  response: DashboardRecord,
  errors: [404, 409],
});

export const deleteDashboard = defineEndpoint({
  method: "delete",
  path: "/api/v1/custom-dashboards/{id}",
  summary: "Delete a dashboard, its versions and its embeds",
  tags: ["Dashboards"],
  access: EDITORS,
  params: IdParams,
  status: 204,
  errors: [404],
});

export const seedDashboards = defineEndpoint({
  method: "post",
  path: "/api/v1/custom-dashboards/_seed",
  summary: "Load the bundled sample dashboard (idempotent)",
  description: "Creates or refreshes the `sample-sales` dashboard over the demo warehouse and publishes it.",
  tags: ["Dashboards"],
  access: "admin",
  response: DashboardRecord,
  rateLimit: { limit: 10, windowSeconds: 60 },
});

/** Where a published manifest came from, as its publisher declares it (CI: the commit it was built from). */
export const VersionSource = z
  .strictObject({
    repository: z.string().min(1).max(300).optional().describe("e.g. acme/dashboards"),
    commit: z.string().regex(/^[0-9a-fA-F]{7,64}$/, "a commit SHA: 7-64 hexadecimal digits").optional(),
    ref: z.string().min(1).max(300).optional().describe("branch or tag, e.g. refs/heads/main"),
    path: z.string().min(1).max(500).optional().describe("the manifest file in the repository"),
    run_url: z.url({ protocol: /^https?$/ }).max(2000).optional().describe("the CI run that published it"),
  })
  .meta({ id: "VersionSource" });
export type VersionSource = z.output<typeof VersionSource>;

export const PublishMessage = z.string().trim().min(1).max(2000).describe("what changed and why, e.g. the commit message");

export const PublishBody = z
  .object({
    message: PublishMessage.optional(),
    source: VersionSource.optional(),
  })
  .optional()
  .meta({ id: "PublishDashboard" });

export const publishDashboard = defineEndpoint({
  method: "post",
  path: "/api/v1/custom-dashboards/{id}/publish",
  summary: "Publish the draft as a new immutable version",
  description: "The body is optional: a message and the manifest's source (repository, commit…) are kept with the version and shown in its history.",
  tags: ["Dashboards"],
  access: EDITORS,
  keyScope: "dashboards:publish",
  params: IdParams,
  body: PublishBody,
  response: DashboardRecord,
  errors: [404, 422],
  rateLimit: { limit: 30, windowSeconds: 60 },
});

export const EmbedBody = z
  .object({
    locked_filters: z
      .record(z.string(), z.unknown())
      .default({})
      .describe("filter widget id -> value fixed for the embed; the embedding page cannot change it"),
    expires_in: z.number().int().min(60).max(30 * 24 * 3600).default(24 * 3600).describe("seconds the token stays valid"),
    allowed_origins: z
      .array(z.url({ protocol: /^https?$/ }).transform((u) => new URL(u).origin))
      .max(20)
      .default([])
      .describe("partner origins allowed to frame the embed (Content-Security-Policy frame-ancestors); none means any"),
    attributes: MemberAttributes.default({}).describe(
      "member attributes signed into the token for the datasets' field policies (e.g. the partner's user region); each value must be one the creator holds, unless the creator is an organization admin",
    ),
  })
  .optional()
  .meta({ id: "EmbedRequest" });

export const EmbedResponse = z
  .object({
    embed_id: z.string().describe("id of this grant, to revoke it"),
    token: z.string().describe("signed embed token (not a bearer token)"),
    url: z.string().describe("the page an iframe opens"),
    iframe: z.string().describe("HTML snippet to paste into the partner page"),
    dashboard_id: z.string(),
    version: z.number().int(),
    locked_filters: z.record(z.string(), z.unknown()),
    allowed_origins: z.array(z.string()),
    expires_at: z.iso.datetime(),
  })
  .meta({ id: "Embed" });

export const embedDashboard = defineEndpoint({
  method: "post",
  path: "/api/v1/custom-dashboards/{id}/embed",
  summary: "Create a signed embed token and iframe snippet",
  description:
    "Requires a published dashboard (409 while it has no published version) whose published manifest sets platform.allow_embed: true " +
    "(403 otherwise). The body is optional: without one the token lives 24 hours, locks no filter and may be framed by any origin.",
  tags: ["Dashboards"],
  access: EDITORS,
  keyScope: "embeds:write",
  params: IdParams,
  body: EmbedBody,
  response: EmbedResponse,
  status: 201,
  errors: [403, 404, 409],
});

export const listEmbeds = defineEndpoint({
  method: "get",
  path: "/api/v1/custom-dashboards/{id}/embeds",
  summary: "List embed grants of a dashboard",
  description: "Newest first.",
  tags: ["Dashboards"],
  access: EDITORS,
  params: IdParams,
  query: pageQuery,
  response: pageOf(
    z.object({
      embed_id: z.string(),
      version: z.number().int(),
      locked_filters: z.record(z.string(), z.unknown()),
      allowed_origins: z.array(z.string()),
      expires_at: z.iso.datetime(),
      revoked_at: z.iso.datetime().nullable(),
      created_by: z.string(),
      created_at: z.iso.datetime(),
    }),
  ),
  errors: [404],
});

export const revokeEmbed = defineEndpoint({
  method: "delete",
  path: "/api/v1/custom-dashboards/{id}/embeds/{embed_id}",
  summary: "Revoke an embed token",
  tags: ["Dashboards"],
  access: EDITORS,
  keyScope: "embeds:write",
  params: IdParams.extend({ embed_id: z.string().min(1).max(100) }),
  status: 204,
  errors: [404],
});

export const WidgetResult = z.object({
  columns: z.array(z.string()),
  rows: z.array(z.record(z.string(), z.unknown())),
  error: z.object({ detail: z.string() }).nullable(),
  cached: z.boolean().describe("served from the short-lived result cache"),
  truncated: z
    .boolean()
    .optional()
    .describe("true when more rows matched than the widget row cap (5,000) or the dataset's own `limit`, and `rows` holds the first of them; the server always sends it"),
  limit: z.number().int().optional().describe("the dataset's own `limit` when it is what cut the rows (`truncated`)"),
  source: z
    .discriminatedUnion("kind", [z.object({ kind: z.literal("rollup"), name: z.string().describe("the rollup's name in the manifest") }), z.object({ kind: z.literal("base") })])
    .optional()
    .describe("which source answered a dataset widget: one of the dashboard's rollups (exactly the tables' answer, pre-aggregated) or the tables themselves; absent for widgets without a warehouse statement"),
  restricted: z
    .string()
    .optional()
    .describe("set instead of data when the widget needs a field the dataset's field policies hide from this viewer (hidden, or restricted to other roles or attributes): a notice to show, not an error"),
});
/** One widget's data or error: what the engine computes, the query endpoint answers and the widgets render. */
export type WidgetResult = z.output<typeof WidgetResult>;
/** Widget id -> its data, as the query endpoint answers and the pages render. */
export type WidgetResults = Record<string, WidgetResult>;

export const QueryBody = z
  .object({
    filters: z.record(z.string(), z.unknown()).default({}).describe("filter widget metadata.id -> value"),
    widget_ids: z.array(z.string()).max(200).optional().describe("widgets to compute; all when absent. Duplicates are computed once; at most 100 distinct widgets (422 beyond)"),
    version: z.union([z.literal("draft"), z.literal("published"), z.number().int().min(1)]).default("published").describe("draft is for editors"),
    refresh: z.boolean().optional().describe("recompute every requested widget instead of serving cached results; at most 10 refreshes per caller per minute (429 with Retry-After beyond)"),
    preview_as: Role.optional().describe(
      "Preview as: the datasets' field policies as a member of this role with no attributes sees them; organization admins only (403 for anyone else)",
    ),
  })
  .default({ filters: {}, version: "published" })
  .meta({ id: "DashboardQuery" });

export const QueryResponse = z
  .object({
    dashboard_id: z.string(),
    version: z.union([z.number().int(), z.literal("draft")]),
    widgets: z.record(z.string(), WidgetResult),
  })
  .meta({ id: "DashboardQueryResult" });

export const queryDashboard = defineEndpoint({
  method: "post",
  path: "/api/v1/custom-dashboards/{id}/query",
  summary: "Data for the dashboard's widgets under the given filter values, in one round trip",
  description:
    "One widget's failure is reported in its `error` and does not fail the others. Results are cached briefly per organization, version, widget and the filter values that widget depends on. " +
    "Each request has a budget: at most 100 distinct widgets (422), 100,000 rows in all and 30 s of computing (503 past either, and nothing of that request is cached). " +
    "A version whose stored manifest no longer passes validation (saved before a rule was tightened) answers 422 with its problems to editors and 503 with a sentence, no details, to other roles. " +
    "Datasets' field policies apply to the caller's role and member attributes: a field they may not see is not in the rows at all, a masked one holds its mask, a widget that needs one answers `restricted`, and a filter value set on such a field answers 403.",
  tags: ["Dashboards"],
  access: "user",
  keyScope: "dashboards:read",
  params: IdParams,
  body: QueryBody,
  response: QueryResponse,
  errors: [403, 404, 422, 503],
  rateLimit: { limit: 120, windowSeconds: 60 },
  // Refreshing recomputes every widget and skips the cache: a tighter limit of its own.
  sharedLimits: [
    { name: "dashboard refresh", limit: 10, windowSeconds: 60, key: ({ principal, body }) => (body.refresh && principal ? `${principal.orgId}:${principal.userId}` : null) },
  ],
});

export const DashboardRollup = z
  .object({
    name: z.string().describe("the rollup's name in the manifest"),
    dataset: z.string().describe("the dataset that declares it"),
    state: z
      .enum(["ready", "building", "failed", "not_built"])
      .describe(
        "ready: built and fresh, it answers the widgets below; building: declared and waiting for the worker (never built, or the warehouse changed since), the tables answer meanwhile; " +
          "failed: its last build failed (`error` says why), the tables answer; not_built: not declared yet (a draft's rollups are declared when it is published)",
      ),
    error: z.string().nullable().describe("why the last build failed, for `failed`; to an editor limited to some locations, only that it failed (a build reads every location, so its error could quote another location's rows)"),
    widgets: z
      .array(z.object({ id: z.string(), title: z.string() }))
      .describe("the widgets this rollup answers under the dashboard's default filter values, decided by the routing the query uses (empty unless ready)"),
  })
  .meta({ id: "DashboardRollup" });
export type DashboardRollup = z.output<typeof DashboardRollup>;

export const DashboardRollups = z
  .object({
    dashboard_id: z.string(),
    version: z.literal("draft"),
    rollups: z.array(DashboardRollup).describe("every rollup the draft declares, in manifest order"),
    base_widgets: z.array(z.object({ id: z.string(), title: z.string() })).describe("data widgets that read the tables under the default filter values"),
  })
  .meta({ id: "DashboardRollups" });
export type DashboardRollups = z.output<typeof DashboardRollups>;

export const getDashboardRollups = defineEndpoint({
  method: "get",
  path: "/api/v1/custom-dashboards/{id}/rollups",
  summary: "The draft's rollups: their build state and which widgets each answers",
  description:
    "For the manifest editor (docs/rollups.md): each rollup the saved draft declares, whether it is built (ready, building, failed with the reason, not built) and the widgets it answers " +
    "under the dashboard's default filter values, by the same routing the query endpoint applies, so the list agrees with each widget's `source` there. " +
    "A draft that no longer passes validation answers 422 with its problems.",
  tags: ["Dashboards"],
  access: EDITORS,
  params: IdParams,
  response: DashboardRollups,
  errors: [404, 422],
});

export const EmbedQueryBody = z
  .object({
    token: z.string().min(10).max(4000).describe("the embed token"),
    filters: z.record(z.string(), z.unknown()).default({}),
    widget_ids: z.array(z.string()).max(200).optional(),
  })
  .meta({ id: "EmbedQuery" });

export const queryEmbed = defineEndpoint({
  method: "post",
  path: "/api/v1/embed/query",
  summary: "Widget data for an embedded dashboard",
  description:
    "Authenticated by the embed token in the body only: cookies and Authorization headers are ignored. Data is read under the location scope of the embed's creator; locked filter values override whatever the page sends. The same per-request budget as the signed-in query applies (422, 503). A version whose stored manifest no longer passes validation answers 503 \"This dashboard is temporarily unavailable\", without details.",
  tags: ["Dashboards"],
  access: "public",
  credentials: "none",
  body: EmbedQueryBody,
  response: QueryResponse,
  errors: [401, 403, 404, 422, 503],
  rateLimit: { limit: 120, windowSeconds: 60 },
});

export const PublicQueryBody = z
  .object({
    org: z.string().min(1).max(100).describe("organization slug"),
    slug: z.string().min(1).max(200).describe("dashboard slug"),
    filters: z.record(z.string(), z.unknown()).default({}),
    widget_ids: z.array(z.string()).max(200).optional(),
  })
  .meta({ id: "PublicQuery" });

export const queryPublicDashboard = defineEndpoint({
  method: "post",
  path: "/api/v1/public/query",
  summary: "Widget data for a public dashboard",
  description:
    "No sign-in: answers for the current published version of a dashboard whose manifest says `platform.public: true`, read under its publisher's location scope; 404 for anything else; 503 \"This dashboard is temporarily unavailable\" (no details) while its stored manifest no longer passes validation. Cookies and Authorization headers are ignored.",
  tags: ["Dashboards"],
  access: "public",
  credentials: "none",
  body: PublicQueryBody,
  response: QueryResponse,
  errors: [403, 404, 422, 503],
  rateLimit: { limit: 120, windowSeconds: 60 },
});

/** Per embed grant, over all its viewers: one leaked link cannot be used to load the warehouse from many addresses. */
export const EMBED_GRANT_RATE_LIMIT = { limit: 600, windowSeconds: 60 };
