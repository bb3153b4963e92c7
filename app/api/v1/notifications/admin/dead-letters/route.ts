import { route } from "@/lib/api/route";
import { listDeadLettersEndpoint } from "@/lib/notifications/contract";
import { listDeadLetters } from "@/lib/notifications/admin/dead-letters";

export const GET = route(listDeadLettersEndpoint, ({ principal, query }) => listDeadLetters(principal, query));
