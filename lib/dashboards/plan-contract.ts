import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { EDITORS, PublishMessage, VersionSource } from "./contract";
import { ManifestDiff } from "./versions-contract";
import { DatasetPlanItem } from "@/lib/datasets/contract";

/** How many manifest files one plan or apply takes (the request body's size limit applies too). */
export const MAX_PLAN_FILES = 200;

export const ManifestFile = z.object({
  path: z.string().min(1).max(500).describe("the file's path as the client knows it; its name without .yaml/.yml is the dashboard's slug (a `kind: dataset` file is named by its metadata.id)"),
  content: z.string().max(1_000_000).describe("the manifest YAML"),
});
export type ManifestFile = z.infer<typeof ManifestFile>;

const Files = z.array(ManifestFile).max(MAX_PLAN_FILES).describe(`at most ${MAX_PLAN_FILES} files, one per dashboard`);

export const PlanBody = z
  .object({
    files: Files,
    prune: z.boolean().default(false).describe("plan to delete the organization's dashboards that no file names"),
  })
  .meta({ id: "PlanRequest" });

/** A dashboard's state a plan was made against: apply refuses (409) when it is no longer so. */
export const PlanBase = z
  .object({
    draft_revision: z.number().int(),
    published_version: z.number().int().nullable(),
  })
  .nullable()
  .describe("null: no dashboard had this slug");
export type PlanBase = z.infer<typeof PlanBase>;

export const PlanError = z.object({ file: z.string(), line: z.number().int(), column: z.number().int(), path: z.string(), message: z.string() });
export type PlanError = z.infer<typeof PlanError>;

export const PlanCheck = z.object({
  kind: z.enum(["sql", "embed", "public"]),
  severity: z.enum(["error", "warning"]).describe("an error stops apply; a warning is for the reviewer"),
  widget: z.string().nullable(),
  message: z.string(),
});
export type PlanCheck = z.infer<typeof PlanCheck>;

export const PlanItem = z.object({
  slug: z.string(),
  file: z.string().nullable().describe("null for a dashboard no file names"),
  action: z
    .enum(["create", "update", "unchanged", "delete", "keep", "invalid"])
    .describe("against the draft; keep: no file names it and prune is off; invalid: the file has errors"),
  dashboard_id: z.string().nullable(),
  base: PlanBase,
  publish_needed: z.boolean().describe("publishing would make a new version: the file differs from the published version, or none is published"),
  diff_vs_draft: ManifestDiff.nullable(),
  diff_vs_published: ManifestDiff.nullable(),
  errors: z.array(PlanError).describe("every validation problem of the file, with its line and column"),
  checks: z.array(PlanCheck).describe("what only the server can tell: SQL under the read-only role, embeds' locked filters, public dashboards"),
});
export type PlanItem = z.infer<typeof PlanItem>;

export const Plan = z
  .object({
    valid: z.boolean().describe("no file has errors and no check failed: apply would be accepted"),
    changes: z.boolean().describe("some dashboard would be created, updated or deleted"),
    publishes: z.boolean().describe("apply with publish would make at least one new version"),
    items: z.array(PlanItem),
    datasets: z.array(DatasetPlanItem).describe("the shared dataset files (`kind: dataset`): changes per column and what reads them, values before and after"),
    expected: z.record(z.string(), PlanBase).describe("slug -> the state planned against; give it back to apply"),
    expected_datasets: z.record(z.string(), z.number().int().nullable()).describe("dataset id -> the version planned against (null: none); give it back to apply"),
  })
  .meta({ id: "Plan" });
export type Plan = z.infer<typeof Plan>;

export const planDashboards = defineEndpoint({
  method: "post",
  path: "/api/v1/custom-dashboards/_plan",
  summary: "Plan manifest files against the organization's dashboards (dry run)",
  description:
    "Matches each file to a dashboard by slug (its file name) and answers per dashboard: create, update or unchanged against the draft, " +
    "the meaning-level diff against the draft and the published version, every validation error with file, line and column, and checks " +
    "only the server can make (SQL compiled under the read-only role, embeds whose locked filters would disappear, public dashboards the change reaches). Writes nothing.",
  tags: ["Dashboards"],
  access: EDITORS,
  keyScope: "dashboards:read",
  body: PlanBody,
  response: Plan,
  rateLimit: { limit: 30, windowSeconds: 60 },
});

export const ApplyBody = PlanBody.extend({
  expected: z.record(z.string(), PlanBase).describe("the plan's `expected`: each dashboard must still be as it was planned against"),
  expected_datasets: z.record(z.string(), z.number().int().nullable()).default({}).describe("the plan's `expected_datasets`: each shared dataset must still be at the version planned against"),
  publish: z.boolean().default(false).describe("publish every dashboard whose file differs from its published version (needs `dashboards:publish` for an API key)"),
  message: PublishMessage.optional(),
  source: VersionSource.optional(),
}).meta({ id: "ApplyRequest" });

export const ApplyResult = z
  .object({
    items: z.array(
      z.object({
        slug: z.string(),
        action: z.enum(["create", "update", "unchanged", "delete", "keep"]),
        dashboard_id: z.string().nullable(),
        draft_revision: z.number().int().nullable(),
        published_version: z.number().int().nullable(),
        published: z.boolean().describe("a new version was published"),
      }),
    ),
    datasets: z.array(z.object({ id: z.string(), action: z.enum(["create", "update", "unchanged"]), version: z.number().int().nullable() })).describe("the shared datasets of the files"),
  })
  .meta({ id: "ApplyResult" });
export type ApplyResult = z.infer<typeof ApplyResult>;

export const applyDashboards = defineEndpoint({
  method: "post",
  path: "/api/v1/custom-dashboards/_apply",
  summary: "Apply manifest files: every dashboard in one transaction, or none",
  description:
    "Plans the files again and writes them all in one transaction. 409 naming the dashboards that changed since the plan (an edit in the editor, another push) " +
    "when any is no longer as `expected` says; 422 with file, line and column when a file has errors or a check fails. Nothing is deleted unless `prune`. " +
    "With `publish`, each dashboard whose file differs from its published version gets a new version carrying `message` and `source`.",
  tags: ["Dashboards"],
  access: EDITORS,
  keyScope: "dashboards:write",
  body: ApplyBody,
  response: ApplyResult,
  errors: [403, 409, 422],
  rateLimit: { limit: 30, windowSeconds: 60 },
});
