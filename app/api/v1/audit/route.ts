import { route } from "@/lib/api/route";
import { listAudit } from "@/lib/audit/operations";

export const GET = route(listAudit);
