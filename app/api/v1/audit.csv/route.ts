import { route } from "@/lib/api/route";
import { exportAudit } from "@/lib/audit-log/operations";

export const GET = route(exportAudit);
