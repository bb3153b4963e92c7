import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";

const IdParams = z.object({ id: z.string().min(1).max(200).describe("dashboard id, or its slug") });

/** Filter values travel as in the viewer's URL: `f.<filter widget id>=<value>` (lib/dashboards/wiring.ts). */
export const EXPORT_FILTER_PREFIX = "f.";

/** What the file is: the same for every way of asking. */
const reportOptions = {
  format: z.enum(["pdf", "png"]).default("pdf").describe("pdf: every tab (or `tab`), paginated; png: one tab as one image"),
  paper: z.enum(["a4", "letter"]).default("a4").describe("PDF paper size"),
  orientation: z.enum(["portrait", "landscape"]).default("portrait").describe("PDF orientation"),
  tab: z.string().min(1).max(64).optional().describe("PDF: only this tab; PNG: this tab (the first by default)"),
  width: z.coerce.number().int().min(320).max(4000).optional().describe("PNG width in pixels (1200 by default)"),
};
const filtersNote = "Filter values as in the viewer's URL: f.<filter id>=<value> (text as typed, anything else JSON)";

export const ExportQuery = z
  .looseObject({
    ...reportOptions,
    version: z.enum(["published", "draft"]).default("published").describe("draft is for editors, as in the viewer; other roles get the published version"),
  })
  .describe(filtersNote);

export const EmbedExportQuery = z
  .looseObject({ token: z.string().min(10).max(4000).describe("the embed token (the one in the page's /embed/<token> address)"), ...reportOptions })
  .describe(filtersNote);

export const PublicExportQuery = z
  .looseObject({ org: z.string().min(1).max(100).describe("organization slug"), slug: z.string().min(1).max(200).describe("dashboard slug"), ...reportOptions })
  .describe(filtersNote);

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

const offeredNote =
  "Only a format the manifest offers on pages without a sign-in (`platform.downloads.pdf` / `.png`, off unless written): 403 otherwise. " +
  "The same limits as the signed-in export (50 pages, 200 rows per table, 30 s; one render per organization at a time, 503 with Retry-After past 60 s).";

export const exportEmbed = defineEndpoint({
  method: "get",
  path: "/api/v1/embed/export",
  summary: "An embedded dashboard as a PDF or PNG report",
  description:
    "What the embed's page shows, as a file: the version its token was made for, read under the embed creator's location scope, with its locked filter values over the `f.<filter id>` parameters, exactly as `POST /api/v1/embed/query`. " +
    "Authenticated by the embed token only (cookies and Authorization headers are ignored); 401 for a token that is not valid, expired or revoked, 403 when embedding was turned off. " +
    `${offeredNote} A format must be offered by both the embedded version and the dashboard's current published version, so publishing with downloads off stops every link's.`,
  tags: ["Dashboards"],
  access: "public",
  credentials: "none",
  query: EmbedExportQuery,
  produces: ["application/pdf", "image/png"],
  errors: [401, 403, 404, 422, 503],
  rateLimit: { limit: 20, windowSeconds: 60 },
});

export const exportPublicDashboard = defineEndpoint({
  method: "get",
  path: "/api/v1/public/export",
  summary: "A public dashboard as a PDF or PNG report",
  description:
    "No sign-in: the current published version of a dashboard whose manifest says `platform.public: true`, read under its publisher's location scope, exactly as `POST /api/v1/public/query`; 404 for anything else. " +
    offeredNote,
  tags: ["Dashboards"],
  access: "public",
  credentials: "none",
  query: PublicExportQuery,
  produces: ["application/pdf", "image/png"],
  errors: [403, 404, 422, 503],
  rateLimit: { limit: 20, windowSeconds: 60 },
});
