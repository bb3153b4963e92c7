import { route } from "@/lib/api/route";
import { dropDataTable, getDataTable } from "@/lib/data/operations";

export const GET = route(getDataTable);
export const DELETE = route(dropDataTable);
