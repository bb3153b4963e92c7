import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { pageOf, pageQuery } from "@/lib/pagination";
import { DashboardRecord, EDITORS, PublishMessage, VersionSource } from "./contract";

const IdParams = z.object({ id: z.string().min(1).max(200).describe("dashboard id, or its slug") });

/** A version number, or the names of the two versions every dashboard may have. */
export const VersionRef = z
  .union([z.literal("draft"), z.literal("published"), z.coerce.number().int().min(1).max(1_000_000)])
  .describe("a version number, `published` (the version viewers see) or `draft` (the editable manifest)");
export type VersionRef = z.output<typeof VersionRef>;

const VersionParams = IdParams.extend({ version: VersionRef });

export const VersionSummary = z
  .object({
    version: z.number().int(),
    name: z.string().describe("the dashboard's name in this version"),
    published_at: z.iso.datetime(),
    published_by: z
      .object({
        kind: z.enum(["user", "api_key"]),
        id: z.string(),
        name: z.string().nullable().describe("the user's name or the API key's name; null when it no longer exists"),
      })
      .describe("who published it: a user, or an organization API key (CI)"),
    message: z.string().nullable(),
    source: VersionSource.nullable(),
    restored_from: z.number().int().nullable().describe("the version this one re-published, when a restore made it"),
    is_published: z.boolean().describe("the version viewers and embeds of the dashboard see now"),
  })
  .meta({ id: "DashboardVersion" });
export type VersionSummary = z.infer<typeof VersionSummary>;

export const VersionDetail = VersionSummary.extend({ spec_yaml: z.string() }).meta({ id: "DashboardVersionDetail" });

/** One field that differs: its path inside the item (`spec.layout.x`, `spec.metrics[id=revenue].expression`). */
export const FieldChange = z.object({
  path: z.string(),
  before: z.unknown().optional().describe("absent when the field was added"),
  after: z.unknown().optional().describe("absent when the field was removed"),
});
export type FieldChange = z.infer<typeof FieldChange>;

export const DiffEntry = z.object({
  section: z.enum(["dashboard", "widgets", "filters", "tabs", "datasets"]).describe("filters are the filter widgets"),
  id: z.string().describe("widget, tab or dataset id; the dashboard's own settings are `dashboard`"),
  change: z.enum(["added", "removed", "changed", "moved"]).describe("moved: only the widget's layout (position, size) changed"),
  fields: z.array(FieldChange).describe("for changed and moved; empty for added and removed"),
});
export type DiffEntry = z.infer<typeof DiffEntry>;

export const ManifestDiff = z
  .object({
    changed: z.boolean(),
    summary: z.object({ added: z.number().int(), removed: z.number().int(), changed: z.number().int(), moved: z.number().int() }),
    entries: z.array(DiffEntry),
    unparsed: z
      .boolean()
      .describe("true when a side does not pass validation: the diff is then of its YAML as written, without the manifest's defaults"),
  })
  .meta({ id: "ManifestDiff" });
export type ManifestDiff = z.infer<typeof ManifestDiff>;

export const listVersions = defineEndpoint({
  method: "get",
  path: "/api/v1/custom-dashboards/{id}/versions",
  summary: "List a dashboard's published versions",
  description: "Newest first: number, when and by whom (a user or an API key) it was published, its message and source (repository, commit…).",
  tags: ["Dashboards"],
  access: EDITORS,
  params: IdParams,
  query: pageQuery,
  response: pageOf(VersionSummary).meta({ id: "DashboardVersionList" }),
  errors: [404],
});

export const getVersion = defineEndpoint({
  method: "get",
  path: "/api/v1/custom-dashboards/{id}/versions/{version}",
  summary: "Read one published version, with its manifest",
  description: "`published` names the version viewers see now. The draft is the dashboard itself (GET /api/v1/custom-dashboards/{id}).",
  tags: ["Dashboards"],
  access: EDITORS,
  params: VersionParams,
  response: VersionDetail,
  errors: [404],
});

export const DiffQuery = z.object({ to: VersionRef.default("draft").describe("the other side; the draft by default") });

export const diffVersions = defineEndpoint({
  method: "get",
  path: "/api/v1/custom-dashboards/{id}/versions/{version}/diff",
  summary: "Meaning-level diff between two versions, or a version and the draft",
  description:
    "Compares the parsed, validated manifests, not their text: key order, quoting, comments, whitespace and fields written at their default do not count. " +
    "Entries name widgets, filters, tabs and datasets added, removed or changed (by field path), and widgets moved or resized.",
  tags: ["Dashboards"],
  access: EDITORS,
  params: VersionParams,
  query: DiffQuery,
  response: ManifestDiff.extend({ from: z.union([z.number().int(), z.literal("draft")]), to: z.union([z.number().int(), z.literal("draft")]) }).meta({ id: "DashboardVersionDiff" }),
  errors: [404],
});

export const RestoreBody = z
  .object({
    publish: z.boolean().default(false).describe("also publish the restored manifest as a new version (needs `dashboards:publish` for an API key)"),
    message: PublishMessage.optional().describe("the new version's message; default `Restore version N`"),
  })
  .optional()
  .meta({ id: "RestoreVersion" });

export const restoreVersion = defineEndpoint({
  method: "post",
  path: "/api/v1/custom-dashboards/{id}/versions/{version}/restore",
  summary: "Make a version's manifest the draft again (and optionally publish it as a new version)",
  description: "History is never rewritten: the draft takes the version's manifest and name, and publishing makes a new version that records which one it restored.",
  tags: ["Dashboards"],
  access: EDITORS,
  params: VersionParams,
  body: RestoreBody,
  response: DashboardRecord,
  errors: [403, 404, 422],
});
