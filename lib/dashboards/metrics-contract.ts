import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { pageOf, pageQuery } from "@/lib/pagination";
import { CatalogMetric, MetricParams, MetricSeries } from "@/lib/datasets/contract";

/*
 * The metrics catalog (issue 48 §3): every metric of the organization's shared datasets with its definition, owner,
 * uses and certification. Every member reads it (a definition is what their dashboards already show); only an admin
 * certifies, and a changed definition loses its mark on the push that changes it (lib/dashboards/dataset-plan.ts).
 */

const tags = ["Metrics"];
const READERS = ["admin", "general_manager", "analyst"] as const;

export const ListMetricsQuery = pageQuery.extend({ certified: z.enum(["true", "false"]).optional().describe("only certified (true) or uncertified (false) metrics") });

export const listMetrics = defineEndpoint({
  method: "get",
  path: "/api/v1/metrics",
  summary: "The metrics catalog",
  description: "Every metric of the organization's shared datasets, by dataset then metric id: definition, owner, certification, and the dashboard widgets that read it.",
  tags,
  access: READERS,
  keyScope: "dashboards:read",
  query: ListMetricsQuery,
  response: pageOf(CatalogMetric),
});

export const getMetricSeries = defineEndpoint({
  method: "get",
  path: "/api/v1/metrics/{dataset}/{metric}/series",
  summary: "A metric's small chart",
  description: "The metric grouped by its dataset's time (or first) dimension, run through the query engine in the caller's location scope; at most 24 points.",
  tags,
  access: READERS,
  keyScope: "dashboards:read",
  params: MetricParams,
  response: MetricSeries,
  errors: [404],
});

export const certifyMetric = defineEndpoint({
  method: "put",
  path: "/api/v1/metrics/{dataset}/{metric}/certification",
  summary: "Certify a metric's current definition",
  description: "Admins only. The mark holds for the definition the metric has now; a push that changes it removes the mark.",
  tags,
  access: "admin",
  keyScope: "dashboards:publish",
  params: MetricParams,
  response: CatalogMetric,
  errors: [404],
});

export const uncertifyMetric = defineEndpoint({
  method: "delete",
  path: "/api/v1/metrics/{dataset}/{metric}/certification",
  summary: "Remove a metric's certification",
  description: "Admins only.",
  tags,
  access: "admin",
  keyScope: "dashboards:publish",
  params: MetricParams,
  response: CatalogMetric,
  errors: [404],
});
