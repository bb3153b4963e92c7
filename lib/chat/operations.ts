import "server-only";
import { defineOperation } from "@/lib/operation";
import { answerChat } from "./answer";
import * as contract from "./contract";

export const chat = defineOperation(contract.chat, ({ principal, body, signal }) => answerChat(principal, body, signal));
