import "server-only";
import { defineOperation } from "@/lib/operation";
import * as contract from "./sessions-contract";
import * as sessions from "./end-sessions";

export const endOwnSessions = defineOperation(contract.endOwnSessions, ({ principal }) => sessions.endOwnSessions(principal));

export const endUserSessions = defineOperation(contract.endUserSessions, ({ principal, params }) => sessions.endUserSessions(principal, params.id));
