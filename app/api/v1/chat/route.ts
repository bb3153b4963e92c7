import { route } from "@/lib/api/route";
import { chat } from "@/lib/chat/operations";

export const POST = route(chat);
