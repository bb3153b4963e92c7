import { route } from "@/lib/api/route";
import { requestPasswordReset } from "@/lib/members/operations";

export const POST = route(requestPasswordReset);
