import { route } from "@/lib/api/route";
import { exportAudit } from "@/lib/audit/operations";

export const GET = route(exportAudit);
