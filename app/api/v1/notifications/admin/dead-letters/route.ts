import { route } from "@/lib/api/route";
import { listDeadLettersEndpoint } from "@/lib/notifications/contract";
import { listDeadLetters } from "@/lib/notifications/health";

export const GET = route(listDeadLettersEndpoint, ({ principal, query }) => listDeadLetters(principal, query));
