import { route } from "@/lib/api/route";
import { getQuietHoursEndpoint, putQuietHoursEndpoint } from "@/lib/notifications/contract";
import { systemClock } from "@/lib/notifications/clock";
import { getQuietHours, putQuietHours } from "@/lib/notifications/admin/quiet-hours";

export const GET = route(getQuietHoursEndpoint, ({ principal }) => getQuietHours(principal));
export const PUT = route(putQuietHoursEndpoint, ({ principal, body }) => putQuietHours(principal, body, systemClock.now()));
