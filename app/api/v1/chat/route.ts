import { route } from "@/lib/api/route";
import { chat } from "@/lib/chat/contract";
import { answerChat } from "@/lib/chat/answer";

export const POST = route(chat, ({ principal, body, req }) => answerChat(principal, body, req.signal));
