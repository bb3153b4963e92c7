import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { Role } from "@/lib/access/roles";
// Who edits a dashboard edits its report schedules: the one list of editor roles.
import { EDITORS } from "@/lib/dashboards/contract";
import { pageOf, pageQuery } from "@/lib/pagination";
import { HEADER_SAFE_MESSAGE, isHeaderSafe } from "@/lib/notifications/transports/header-text";

const ts = z.iso.datetime().describe("ISO 8601, UTC");
const tags = ["Reports"];
const IdParams = z.object({ id: z.string().min(1).max(100) });

export const ReportFormat = z.enum(["pdf", "png"]);
export const ReportChannel = z.enum(["email", "slack", "webhook"]);

const distinct = <T>(list: T[]) => new Set(list).size === list.length;

/** The fields a schedule is made of; every one optional in an edit. */
const scheduleFields = {
  dashboard_id: z.string().min(1).max(200).describe("The dashboard (id or slug); it must be published"),
  name: z.string().trim().min(1).max(200).refine(isHeaderSafe, HEADER_SAFE_MESSAGE).describe("Goes into each e-mail's subject: no line breaks or other control characters"),
  cron: z.string().trim().min(1).max(120).describe("Five-field cron expression read in `time_zone`, e.g. `0 8 * * 1` (Mondays 08:00)"),
  time_zone: z.string().min(1).max(64).describe("IANA time zone of the cron expression, e.g. Europe/Berlin"),
  formats: z.array(ReportFormat).min(1).max(2).refine(distinct, "Formats must not repeat").describe("pdf (whole dashboard, paginated) and/or png (one tab)"),
  filters: z.record(z.string(), z.unknown()).describe("Filter widget metadata.id -> value, checked like the viewer's query"),
  paper: z.enum(["a4", "letter"]).describe("PDF paper size"),
  orientation: z.enum(["portrait", "landscape"]).describe("PDF orientation"),
  tab: z.string().min(1).max(200).nullable().describe("The tab a PNG shows (the first when null)"),
  width: z.number().int().min(320).max(4000).nullable().describe("PNG width in pixels (the renderer's default when null)"),
  channels: z.array(ReportChannel).min(1).max(3).refine(distinct, "Channels must not repeat").describe("email (file attached), slack (file, or a signed link), webhook (signed links)"),
  user_ids: z.array(z.string().min(1).max(100)).max(500).describe("Users of the organization: each receives the report in their own role and location scope"),
  addresses: z
    .array(z.email().max(320).transform((a) => a.toLowerCase()))
    .max(500)
    .describe("Other e-mail addresses (an address of a user counts as that user): they receive the shared scope, once an admin approved it, and only in the organization's report_allowed_domains"),
  group_ids: z
    .array(z.string().min(1).max(100))
    .max(50)
    .refine(distinct, "Email groups must not repeat")
    .describe("Email groups of the organization (GET /api/v1/report-email-groups), by e-mail; members are read at each run: those who are users receive their own scope, other addresses the shared scope like `addresses`"),
  shared_location_ids: z
    .array(z.string().min(1).max(100))
    .max(500)
    .nullable()
    .describe("The shared scope's locations (within the caller's own); null: the caller's whole scope. What addresses, Slack and the webhook receive"),
  shared_approved: z
    .boolean()
    .describe(
      "Admins only: lets addresses, Slack and the webhook receive the shared scope, for the dashboard version published now. Reset when an editor changes what they receive (dashboard, formats, paper, orientation, tab, width, filters, channels, addresses, groups, shared locations); a newer published version waits for a new approval",
    ),
  paused: z.boolean(),
};

export const CreateReportScheduleBody = z
  .object({
    ...scheduleFields,
    time_zone: scheduleFields.time_zone.optional().describe("IANA time zone of the cron expression; the organization's when omitted"),
    formats: scheduleFields.formats.default(["pdf"]),
    filters: scheduleFields.filters.default({}),
    paper: scheduleFields.paper.default("a4"),
    orientation: scheduleFields.orientation.default("portrait"),
    tab: scheduleFields.tab.default(null),
    width: scheduleFields.width.default(null),
    user_ids: scheduleFields.user_ids.default([]),
    addresses: scheduleFields.addresses.default([]),
    group_ids: scheduleFields.group_ids.default([]),
    shared_location_ids: scheduleFields.shared_location_ids.default(null),
    shared_approved: scheduleFields.shared_approved.default(false),
    paused: scheduleFields.paused.default(false),
  })
  .meta({ id: "ReportScheduleInput" });
export type CreateReportScheduleBody = z.output<typeof CreateReportScheduleBody>;

export const UpdateReportScheduleBody = z
  .object(Object.fromEntries(Object.entries(scheduleFields).map(([k, v]) => [k, v.optional()])) as { [K in keyof typeof scheduleFields]: z.ZodOptional<(typeof scheduleFields)[K]> })
  .refine((b) => Object.values(b).some((v) => v !== undefined), "Give at least one field to change")
  .meta({ id: "ReportScheduleUpdate" });
export type UpdateReportScheduleBody = z.output<typeof UpdateReportScheduleBody>;

export const ReportRunView = z
  .object({
    id: z.string(),
    scheduled_for: ts,
    trigger: z.enum(["cron", "manual"]),
    status: z.enum(["queued", "sent", "error"]).describe("sent: its deliveries were queued (each one's fate is in delivery health)"),
    renders: z.number().int().describe("Files rendered: one per distinct recipient scope and format"),
    error: z.string().nullable(),
    finished_at: ts.nullable(),
  })
  .meta({ id: "ReportRun" });

export const ReportScheduleView = z
  .object({
    id: z.string(),
    dashboard_id: z.string(),
    dashboard_name: z.string(),
    dashboard_slug: z.string(),
    name: z.string(),
    cron: z.string(),
    time_zone: z.string(),
    formats: z.array(ReportFormat),
    filters: z.record(z.string(), z.unknown()),
    paper: z.enum(["a4", "letter"]),
    orientation: z.enum(["portrait", "landscape"]),
    tab: z.string().nullable(),
    width: z.number().int().nullable(),
    channels: z.array(ReportChannel),
    user_ids: z.array(z.string()),
    addresses: z.array(z.string()),
    group_ids: z.array(z.string()),
    shared_role: Role,
    shared_location_ids: z.array(z.string()).describe("Empty: every location"),
    shared_approved: z.boolean().describe("Whether addresses, Slack and the webhook receive the shared scope now: an admin approved it for the dashboard's current published version"),
    shared_approved_by: z.string().nullable(),
    shared_approved_version: z.number().int().nullable().describe("The dashboard's published version the admin approved; a newer one needs a new approval"),
    shared_status: z
      .enum(["approved", "waiting_for_approval", "waiting_for_reapproval"])
      .describe("approved; waiting_for_approval (never approved, or an editor changed what outside recipients receive); waiting_for_reapproval (the dashboard was published again after the approval). Until approved, addresses, Slack and the webhook receive nothing"),
    paused: z.boolean(),
    next_run_at: ts.nullable().describe("Null while paused"),
    last_run: ReportRunView.nullable(),
    created_by: z.string(),
    owner: z
      .object({ id: z.string(), name: z.string().nullable(), status: z.enum(["active", "deactivated", "deleted"]) })
      .describe("Who made the schedule: it renders in their role and scope, and keeps running after they are deactivated (docs/security.md)"),
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: "ReportSchedule" });
export type ReportScheduleView = z.infer<typeof ReportScheduleView>;

export const ListReportSchedulesQuery = pageQuery.extend({
  dashboard_id: z.string().min(1).max(200).optional().describe("Only this dashboard's schedules (id)"),
});

const editorsNote = "Editors (admins and general managers). A general manager scoped to locations sees and changes only schedules whose shared scope lies within their own.";

export const createReportSchedule = defineEndpoint({
  method: "post",
  path: "/api/v1/report-schedules",
  summary: "Schedule a dashboard report",
  description: `${editorsNote} Each user recipient receives the report rendered in their own role and location scope; addresses, Slack and the webhook receive the shared scope once an admin approved it.`,
  tags,
  access: EDITORS,
  body: CreateReportScheduleBody,
  response: ReportScheduleView,
  status: 201,
  errors: [403, 404, 409, 422],
});

export const listReportSchedules = defineEndpoint({
  method: "get",
  path: "/api/v1/report-schedules",
  summary: "List report schedules, with last and next run",
  description: `${editorsNote} Newest first.`,
  tags,
  access: EDITORS,
  query: ListReportSchedulesQuery,
  response: pageOf(ReportScheduleView),
});

export const getReportSchedule = defineEndpoint({
  method: "get",
  path: "/api/v1/report-schedules/{id}",
  summary: "One report schedule",
  tags,
  access: EDITORS,
  params: IdParams,
  response: ReportScheduleView,
  errors: [404],
});

export const updateReportSchedule = defineEndpoint({
  method: "patch",
  path: "/api/v1/report-schedules/{id}",
  summary: "Edit, pause or resume a report schedule",
  description: "Fields left out keep their value; the result is checked as a whole, like a new schedule.",
  tags,
  access: EDITORS,
  params: IdParams,
  body: UpdateReportScheduleBody,
  response: ReportScheduleView,
  errors: [403, 404, 409, 422],
});

export const deleteReportSchedule = defineEndpoint({
  method: "delete",
  path: "/api/v1/report-schedules/{id}",
  summary: "Delete a report schedule, its runs and files",
  tags,
  access: EDITORS,
  params: IdParams,
  status: 204,
  errors: [404],
});

export const sendReportSchedule = defineEndpoint({
  method: "post",
  path: "/api/v1/report-schedules/{id}/send",
  summary: "Send a report now",
  description: "Queues a run now, paused or not; its deliveries follow the same rules as scheduled ones (scopes, quiet hours, unsubscribes).",
  tags,
  access: EDITORS,
  params: IdParams,
  response: ReportRunView,
  status: 202,
  errors: [404],
  rateLimit: { limit: 10, windowSeconds: 60 },
});

export const ReportEmailGroupView = z
  .object({
    id: z.string().describe("Its id in a schedule's group_ids"),
    group_name: z.string(),
    rule_key: z.string().describe("The notification rule the group was set up for (an admin's email-group subscription)"),
    member_count: z.number().int(),
    created_at: ts,
  })
  .meta({ id: "ReportEmailGroup" });

export const listReportEmailGroups = defineEndpoint({
  method: "get",
  path: "/api/v1/report-email-groups",
  summary: "Email groups a report may be sent to",
  description:
    "The organization's email groups (admins set them up as notification group subscriptions), for editors choosing a schedule's `group_ids`. Members are counted, not listed. Oldest first.",
  tags,
  access: EDITORS,
  query: pageQuery,
  response: pageOf(ReportEmailGroupView),
});

const TokenParams = z.object({ token: z.string().min(20).max(2000).describe("The signed token from the link") });

export const downloadReportFile = defineEndpoint({
  method: "get",
  path: "/api/v1/report-files/{token}",
  summary: "A delivered report's file, behind a signed link",
  description: "For links sent to Slack and webhooks: the token names one rendered file (its organization, run and scope) and expires (410). No sign-in.",
  tags,
  access: "public",
  credentials: "none",
  params: TokenParams,
  produces: "application/octet-stream",
  errors: [401, 404, 410],
  rateLimit: { limit: 60, windowSeconds: 60 },
});

export const unsubscribeReport = defineEndpoint({
  method: "post",
  path: "/api/v1/report-unsubscribe/{token}",
  summary: "One-click unsubscribe from a scheduled report (RFC 8058)",
  description: "The target of each report e-mail's List-Unsubscribe header (mail clients POST `List-Unsubscribe=One-Click`) and of the page its link opens. No sign-in.",
  tags,
  access: "public",
  credentials: "none",
  params: TokenParams,
  response: z.object({ schedule_name: z.string(), recipient: z.string(), unsubscribed: z.literal(true) }),
  errors: [401, 404],
  rateLimit: { limit: 30, windowSeconds: 60 },
});
