import "server-only";
import { defineOperation } from "@/lib/operation";
import * as audit from "./audit-log";
import * as contract from "./contract";

export const listAudit = defineOperation(contract.listAudit, ({ principal, query }) => audit.listAudit(principal, query));

export const exportAudit = defineOperation(contract.exportAudit, async ({ principal, query }) => {
  const day = new Date().toISOString().slice(0, 10);
  return new Response(audit.exportAuditCsv(principal, query), {
    headers: { "Content-Type": "text/csv; charset=utf-8", "Content-Disposition": `attachment; filename="audit-${principal.orgSlug || "log"}-${day}.csv"`, "Cache-Control": "no-store" },
  });
});
