import { route } from "@/lib/api/route";
import { deliveryHealth } from "@/lib/notifications/operations";

export const GET = route(deliveryHealth);
