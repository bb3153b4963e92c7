import "server-only";
import { isOrganizationAdmin, type Principal } from "@/lib/access/roles";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { AuditEvent, Prisma } from "@/lib/db/generated/client";
import { Invalid, forbidden } from "@/lib/errors";
// The one CSV rule of the app (quoting, and formula injection neutralised), shared with widgets' exports.
import { csvField } from "@/lib/export-cells";
import type { AuditEventView, AuditFilters, AuditListQuery } from "./contract";

/*
 * Reading the audit log: admins of every location (who administer people and places) see their organization's rows,
 * newest first. Paged by a cursor, not an offset: rows keep arriving at the top, and an offset would shift under a
 * reader paging through.
 */

function requireAuditReader(principal: Principal): void {
  if (!isOrganizationAdmin(principal)) throw forbidden("The audit log is read by admins of every location");
}

function view(row: AuditEvent): AuditEventView {
  return {
    id: row.id,
    occurred_at: row.occurredAt.toISOString(),
    actor_kind: row.actorKind as AuditEventView["actor_kind"],
    actor_id: row.actorId,
    actor_name: row.actorName,
    address: row.address,
    action: row.action as AuditEventView["action"],
    target_kind: row.targetKind,
    target_id: row.targetId,
    target_name: row.targetName,
    before: row.before ?? null,
    after: row.after ?? null,
  };
}

/** A page's position: the last row's instant and id, base64url (opaque to clients). */
const encodeCursor = (row: AuditEvent) => Buffer.from(`${row.occurredAt.toISOString()}|${row.id}`).toString("base64url");

function decodeCursor(cursor: string): { at: Date; id: string } {
  const [at, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const instant = new Date(at ?? "");
  if (!id || Number.isNaN(instant.getTime())) throw new Invalid([{ loc: ["query", "cursor"], msg: "Not a cursor this list answered; start again without it", type: "cursor_invalid" }]);
  return { at: instant, id };
}

function whereOf(filters: AuditFilters, cursor?: { at: Date; id: string }): Prisma.AuditEventWhereInput {
  const and: Prisma.AuditEventWhereInput[] = [];
  if (filters.actor) and.push({ actorId: filters.actor });
  if (filters.action) and.push({ action: filters.action });
  if (filters.target_kind) and.push({ targetKind: filters.target_kind });
  if (filters.from) and.push({ occurredAt: { gte: new Date(filters.from) } });
  if (filters.to) and.push({ occurredAt: { lt: new Date(filters.to) } });
  if (cursor) and.push({ OR: [{ occurredAt: { lt: cursor.at } }, { occurredAt: cursor.at, id: { lt: cursor.id } }] });
  return { AND: and };
}

const NEWEST_FIRST: Prisma.AuditEventOrderByWithRelationInput[] = [{ occurredAt: "desc" }, { id: "desc" }];

async function pageOf(tx: TenantTx, filters: AuditFilters, limit: number, cursor?: { at: Date; id: string }) {
  const rows = await tx.auditEvent.findMany({ where: whereOf(filters, cursor), orderBy: NEWEST_FIRST, take: limit + 1 });
  const items = rows.slice(0, limit);
  return { rows: items, next: rows.length > limit ? items[items.length - 1] : null };
}

export async function listAudit(principal: Principal, query: AuditListQuery) {
  requireAuditReader(principal);
  const cursor = query.cursor ? decodeCursor(query.cursor) : undefined;
  const { rows, next } = await withTenant(principal, (tx) => pageOf(tx, query, query.limit, cursor));
  return { items: rows.map(view), next_cursor: next ? encodeCursor(next) : null };
}

/** Who appears in the log as an actor (the page's filter): each id once, with the name it last had. */
export async function listAuditActors(principal: Principal): Promise<{ id: string; name: string | null }[]> {
  requireAuditReader(principal);
  const rows = await withTenant(principal, (tx) =>
    tx.$queryRaw<{ id: string; name: string | null }[]>`
      SELECT DISTINCT ON (actor_id) actor_id AS id, actor_name AS name FROM audit_events WHERE actor_id IS NOT NULL ORDER BY actor_id, occurred_at DESC LIMIT 500`,
  );
  return rows.sort((a, b) => (a.name ?? a.id).localeCompare(b.name ?? b.id));
}

export const AUDIT_CSV_COLUMNS = ["occurred_at", "actor_kind", "actor_id", "actor_name", "address", "action", "target_kind", "target_id", "target_name", "before", "after"] as const;

/** Rows per transaction while exporting: each page is its own short transaction, so an export never holds one open. */
const EXPORT_PAGE = 1000;

/**
 * The filtered log as CSV, newest first, streamed page by page (before and after as JSON text). A row written
 * while the export runs is newer than the first page, so it is not in it: the export is the log as it stood.
 */
export function exportAuditCsv(principal: Principal, filters: AuditFilters): ReadableStream<Uint8Array> {
  requireAuditReader(principal);
  const encoder = new TextEncoder();
  let cursor: { at: Date; id: string } | undefined;
  let started = false;
  let done = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode(`\uFEFF${AUDIT_CSV_COLUMNS.join(",")}\r\n`));
        return;
      }
      if (done) return controller.close();
      const { rows, next } = await withTenant(principal, (tx) => pageOf(tx, filters, EXPORT_PAGE, cursor));
      const lines = rows.map((row) => {
        const v = view(row);
        return AUDIT_CSV_COLUMNS.map((c) => csvField(c === "before" || c === "after" ? (v[c] === null ? "" : JSON.stringify(v[c])) : v[c])).join(",");
      });
      if (lines.length > 0) controller.enqueue(encoder.encode(`${lines.join("\r\n")}\r\n`));
      if (next) cursor = { at: next.occurredAt, id: next.id };
      else done = true;
    },
  });
}
