import "server-only";
import { defineOperation } from "@/lib/operation";
import * as contract from "./contract";
import * as settings from "./settings";

export const getOrganizationSettings = defineOperation(contract.getOrganizationSettings, ({ principal }) => settings.getOrganizationSettings(principal));
export const putOrganizationSettings = defineOperation(contract.putOrganizationSettings, ({ principal, body }) => settings.putOrganizationSettings(principal, body));
