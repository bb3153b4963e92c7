import { z } from "zod";
import { defineEndpoint } from "@/lib/api/endpoint";

const IdParams = z.object({ id: z.string().min(1).max(200).describe("dashboard id, or its slug") });

/** Filter values travel as in the viewer's URL: `f.<filter widget id>=<value>` (lib/dashboards/wiring.ts). */
export const EXPORT_FILTER_PREFIX = "f.";

export const ExportQuery = z
  .looseObject({
    format: z.enum(["pdf", "png"]).default("pdf").describe("pdf: every tab (or `tab`), paginated; png: one tab as one image"),
    paper: z.enum(["a4", "letter"]).default("a4").describe("PDF paper size"),
    orientation: z.enum(["portrait", "landscape"]).default("portrait").describe("PDF orientation"),
    tab: z.string().min(1).max(64).optional().describe("PDF: only this tab; PNG: this tab (the first by default)"),
    width: z.coerce.number().int().min(320).max(4000).optional().describe("PNG width in pixels (1200 by default)"),
    version: z.enum(["published", "draft"]).default("published").describe("draft is for editors, as in the viewer; other roles get the published version"),
  })
  .describe("Filter values as in the viewer's URL: f.<filter id>=<value> (text as typed, anything else JSON)");

export const exportDashboard = defineEndpoint({
  method: "get",
  path: "/api/v1/custom-dashboards/{id}/export",
  summary: "The dashboard as a PDF or PNG report, rendered on the server",
  description:
    "Renders what the caller sees of the dashboard — the same version, role and location scope, cache and row-level security as `…/query` — as a vector PDF (every tab a section, A4 or Letter, portrait or landscape) or a PNG of one tab. " +
    "Filter values are passed as `f.<filter id>=<value>` query parameters, as in the viewer's URL; absent filters use their defaults. " +
    "The report's header names the snapshot time (in the organization's time zone), the filters applied and the scope. " +
    "Limits: 50 pages, 200 rows per table, 30 s of drawing; what a limit left out is said on the first page (and counted in `X-Report-Cut`). " +
    "Renders of one organization run one at a time; one that cannot start within 60 s answers 503 with Retry-After. " +
    "Answers `application/pdf` or `image/png` as an attachment; `X-Report-Pages` holds the page count.",
  tags: ["Dashboards"],
  access: "user",
  keyScope: "dashboards:read",
  params: IdParams,
  query: ExportQuery,
  produces: ["application/pdf", "image/png"],
  errors: [404, 422, 503],
  rateLimit: { limit: 20, windowSeconds: 60 },
});
