import "server-only";
import { defineOperation } from "@/lib/operation";
import { enforceLimit } from "@/lib/security/rate-limit";
import * as contract from "./contract";
import * as embeds from "./embeds";
import * as query from "./query";
import * as dashboards from "./dashboards";
import * as dashboardRollups from "./dashboard-rollups";

export const createDashboard = defineOperation(contract.createDashboard, ({ principal, body }) => dashboards.createDashboard(principal, body));

export const listDashboards = defineOperation(contract.listDashboards, ({ principal, query }) => dashboards.listDashboards(principal, query));

export const seedDashboards = defineOperation(contract.seedDashboards, ({ principal }) => dashboards.seedSampleDashboard(principal));

export const getDashboard = defineOperation(contract.getDashboard, ({ principal, params }) => dashboards.getDashboard(principal, params.id));

export const updateDashboard = defineOperation(contract.updateDashboard, ({ principal, params, body }) => dashboards.updateDashboard(principal, params.id, body));

export const deleteDashboard = defineOperation(contract.deleteDashboard, ({ principal, params }) => dashboards.deleteDashboard(principal, params.id));

export const publishDashboard = defineOperation(contract.publishDashboard, ({ principal, params, body }) => dashboards.publishDashboard(principal, params.id, { message: body?.message, source: body?.source }));

export const getDashboardRollups = defineOperation(contract.getDashboardRollups, ({ principal, params }) => dashboardRollups.getDashboardRollups(principal, params.id));

export const embedDashboard = defineOperation(contract.embedDashboard, ({ principal, params, body }) => embeds.createEmbed(principal, params.id, body));

export const listEmbeds = defineOperation(contract.listEmbeds, ({ principal, params, query }) => embeds.listEmbeds(principal, params.id, query));

export const revokeEmbed = defineOperation(contract.revokeEmbed, ({ principal, params }) => embeds.revokeEmbed(principal, params.id, params.embed_id));

export const queryDashboard = defineOperation(contract.queryDashboard, ({ principal, params, body }) => query.queryDashboard(principal, params.id, body));

export const queryEmbed = defineOperation(contract.queryEmbed, async ({ body }) => {
  const grant = await embeds.verifyEmbedToken(body.token);
  // Keyed by the grant the token carries, known only once it is verified, so not a declared shared limit.
  await enforceLimit(`embed grant ${grant.embedId}`, contract.EMBED_GRANT_RATE_LIMIT);
  return query.queryEmbedded(grant, body.filters, body.widget_ids);
});

export const queryPublicDashboard = defineOperation(contract.queryPublicDashboard, ({ body }) => query.queryPublic(body.org, body.slug, body.filters, body.widget_ids));
