import { route } from "@/lib/api/route";
import { getQuietHours, putQuietHours } from "@/lib/notifications/operations";

export const GET = route(getQuietHours);
export const PUT = route(putQuietHours);
