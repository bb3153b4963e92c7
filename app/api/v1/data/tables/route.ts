import { route } from "@/lib/api/route";
import { listDataTables, loadDataTable } from "@/lib/data/operations";

export const GET = route(listDataTables);
export const POST = route(loadDataTable);
