import type { Endpoint } from "./endpoint";
import { listLocations } from "@/lib/locations/contract";
import { healthCheck, openApiDocument } from "./contract";

/**
 * Every endpoint the API serves. /openapi.json is generated from this list,
 * and a test fails when a route handler exists that is not described here.
 */
export const ENDPOINTS: Endpoint[] = [
  healthCheck,
  openApiDocument,
  listLocations,
];
