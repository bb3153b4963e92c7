import "server-only";
import { defineOperation } from "@/lib/operation";
import * as contract from "./metrics-contract";
import * as catalog from "./metrics-catalog";

export const listMetrics = defineOperation(contract.listMetrics, ({ principal, query }) => catalog.listMetrics(principal, query));

export const getMetricSeries = defineOperation(contract.getMetricSeries, ({ principal, params }) => catalog.metricSeries(principal, params.dataset, params.metric));

export const certifyMetric = defineOperation(contract.certifyMetric, ({ principal, params }) => catalog.certifyMetric(principal, params.dataset, params.metric));

export const uncertifyMetric = defineOperation(contract.uncertifyMetric, ({ principal, params }) => catalog.uncertifyMetric(principal, params.dataset, params.metric));
