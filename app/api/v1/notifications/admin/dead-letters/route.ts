import { route } from "@/lib/api/route";
import { listDeadLetters } from "@/lib/notifications/operations";

export const GET = route(listDeadLetters);
