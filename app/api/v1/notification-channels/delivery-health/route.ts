import { route } from "@/lib/api/route";
import { deliveryHealthEndpoint } from "@/lib/notifications/contract";
import { systemClock } from "@/lib/notifications/clock";
import { deliveryHealth } from "@/lib/notifications/admin/delivery-health";

export const GET = route(deliveryHealthEndpoint, ({ principal, query }) => deliveryHealth(principal, query, systemClock.now()));
