import { route } from "@/lib/api/route";
import { endOwnSessions } from "@/lib/auth/sessions-operations";

export const DELETE = route(endOwnSessions);
