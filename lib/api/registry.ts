import type { Endpoint } from "./endpoint";
import { listLocations } from "@/lib/locations/contract";
import * as dashboards from "@/lib/dashboards/contract";
import { NOTIFICATION_ENDPOINTS } from "@/lib/notifications/contract";
import { DOCUMENT_ENDPOINTS } from "@/lib/documents/contract";
import { DOCUMENT_SEARCH_ENDPOINTS } from "@/lib/documents/search-contract";
import { chat } from "@/lib/chat/contract";
import { healthCheck, openApiDocument, readinessCheck } from "./contract";

/**
 * Every endpoint the API serves. /openapi.json is generated from this list,
 * and a test fails when a route handler exists that is not described here.
 */
export const ENDPOINTS: Endpoint[] = [
  healthCheck,
  readinessCheck,
  openApiDocument,
  listLocations,
  dashboards.createDashboard,
  dashboards.listDashboards,
  dashboards.seedDashboards,
  dashboards.getDashboard,
  dashboards.updateDashboard,
  dashboards.deleteDashboard,
  dashboards.publishDashboard,
  dashboards.embedDashboard,
  dashboards.listEmbeds,
  dashboards.revokeEmbed,
  dashboards.queryDashboard,
  dashboards.queryEmbed,
  dashboards.queryPublicDashboard,
  ...NOTIFICATION_ENDPOINTS,
  ...DOCUMENT_ENDPOINTS,
  ...DOCUMENT_SEARCH_ENDPOINTS,
  chat,
];
