import { route } from "@/lib/api/route";
import { listAudit } from "@/lib/audit-log/operations";

export const GET = route(listAudit);
