import { route } from "@/lib/api/route";
import { deliveryHealthEndpoint } from "@/lib/notifications/contract";
import { systemClock } from "@/lib/notifications/clock";
import { deliveryHealth } from "@/lib/notifications/health";

export const GET = route(deliveryHealthEndpoint, ({ principal, query }) => deliveryHealth(principal, query, systemClock.now()));
