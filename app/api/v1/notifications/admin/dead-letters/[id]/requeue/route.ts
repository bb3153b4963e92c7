import { route } from "@/lib/api/route";
import { requeueDeadLetter } from "@/lib/notifications/operations";

export const POST = route(requeueDeadLetter);
