import "server-only";
import { config } from "@/lib/config";
import { checkHealth, checkReadiness } from "@/lib/db/health";
import * as contract from "./contract";
import { buildOpenApi } from "./openapi";
import { defineOperation } from "@/lib/operation";

export const healthCheck = defineOperation(contract.healthCheck, () => checkHealth());

export const readinessCheck = defineOperation(contract.readinessCheck, () => checkReadiness());

export const openApiDocument = defineOperation(contract.openApiDocument, async () => buildOpenApi({ production: config().publicUrl, staging: config().stagingUrl }));
