import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { pageQuery } from "@/lib/pagination";
import { AuditAction, AuditTargetKind } from "@/lib/audit/actions";

const ts = z.iso.datetime().describe("ISO 8601, UTC");

export const AuditEventSchema = z
  .object({
    id: z.string(),
    occurred_at: ts,
    actor_kind: z.enum(["user", "api_key", "system"]).describe("`user`: a person; `api_key`: an organization API key; `system`: no person (a command, an invitee accepting)"),
    actor_id: z.string().nullable(),
    actor_name: z.string().nullable().describe("The person's or key's name when the change was made"),
    address: z.string().nullable().describe("The caller's network address (trusted proxies honoured); null when the change came from no request"),
    action: AuditAction,
    target_kind: AuditTargetKind,
    target_id: z.string().nullable(),
    target_name: z.string().nullable(),
    before: z.unknown().nullable().describe("The target as the API showed it before the change, secrets masked; null when it did not exist"),
    after: z.unknown().nullable().describe("The target after the change, secrets masked; null when it was deleted"),
  })
  .meta({ id: "AuditEvent" });
export type AuditEventView = z.input<typeof AuditEventSchema>;

const filterFields = {
  actor: z.string().trim().min(1).max(200).optional().describe("An actor id: a user id or an API key id"),
  action: AuditAction.optional(),
  target_kind: AuditTargetKind.optional(),
  from: z.iso.datetime({ offset: true }).optional().describe("Changes at or after this instant"),
  to: z.iso.datetime({ offset: true }).optional().describe("Changes before this instant"),
};
const rangeInOrder = (f: { from?: string; to?: string }) => !f.from || !f.to || new Date(f.from) < new Date(f.to);
const RANGE_MESSAGE = { message: "'from' must be before 'to'", path: ["to"] };

/** The filters the list, the CSV export and the page share. */
export const AuditFilters = z.object(filterFields).refine(rangeInOrder, RANGE_MESSAGE);
export type AuditFilters = z.output<typeof AuditFilters>;

export const AuditListQuery = z
  .object({
    ...filterFields,
    cursor: z.string().max(200).optional().describe("The `next_cursor` of the previous page"),
    limit: pageQuery.shape.limit,
  })
  .refine(rangeInOrder, RANGE_MESSAGE);
export type AuditListQuery = z.output<typeof AuditListQuery>;

export const AuditPage = z
  .object({ items: z.array(AuditEventSchema), next_cursor: z.string().nullable().describe("Pass as `cursor` for the next (older) page; null on the last") })
  .meta({ id: "AuditPage" });

const ACCESS_NOTE = "Admins of every location only; API keys are refused. The log is append-only: no endpoint changes or deletes its rows.";

export const listAudit = defineEndpoint({
  method: "get",
  path: "/api/v1/audit",
  summary: "List the organization's audit log",
  description: `Every change an admin or editor made, newest first, with who, when, from which address and what changed. ${ACCESS_NOTE}`,
  tags: ["Audit"],
  access: "admin",
  keyScope: "none",
  query: AuditListQuery,
  response: AuditPage,
});

export const exportAudit = defineEndpoint({
  method: "get",
  path: "/api/v1/audit.csv",
  summary: "Export the audit log as CSV",
  description: `The rows the same filters list, newest first, as CSV (before and after as JSON text). ${ACCESS_NOTE}`,
  tags: ["Audit"],
  access: "admin",
  keyScope: "none",
  query: AuditFilters,
  produces: "text/csv",
});
