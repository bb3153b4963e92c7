import { route } from "@/lib/api/route";
import { exportEmbed } from "@/lib/reports/export-operations";

export const GET = route(exportEmbed);
