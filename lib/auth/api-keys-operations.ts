import "server-only";
import { defineOperation } from "@/lib/operation";
import * as contract from "./api-keys-contract";
import * as apiKeys from "./api-keys";

export const listApiKeys = defineOperation(contract.listApiKeys, ({ principal, query }) => apiKeys.listApiKeys(principal, query));

export const createApiKey = defineOperation(contract.createApiKey, ({ principal, body }) => apiKeys.createApiKey(principal, body));

export const revokeApiKey = defineOperation(contract.revokeApiKey, ({ principal, params }) => apiKeys.revokeApiKey(principal, params.id));
