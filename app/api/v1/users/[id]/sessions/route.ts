import { route } from "@/lib/api/route";
import { endUserSessions } from "@/lib/auth/sessions-operations";

export const DELETE = route(endUserSessions);
