import { route } from "@/lib/api/route";
import { deleteAlert, getAlert, updateAlert } from "@/lib/alerts/operations";

export const GET = route(getAlert);
export const PATCH = route(updateAlert);
export const DELETE = route(deleteAlert);
