import "server-only";
import { defineOperation } from "@/lib/operation";
import * as contract from "@/lib/data/pipes-contract";
import * as ingest from "./ingest";
import * as jobs from "./jobs";
import * as pulls from "./pulls";

export const ingestRows = defineOperation(contract.ingestRows, async ({ req, principal, params, query }) => {
  // The batch is the request body itself, streamed: only route() has one.
  if (!req) throw new Error("ingestRows streams the HTTP request body; serve it with route()");
  const result = await ingest.ingestRows(principal, { table: params.name, query, contentType: req.headers.get("content-type"), idempotencyKey: req.headers.get("idempotency-key"), body: req.body });
  // A replayed answer says so in a header too, as Stripe's and the IETF draft's do.
  return Response.json(contract.IngestResult.parse(result), { status: 200, headers: result.replayed ? { "Idempotent-Replayed": "true" } : {} });
});

export const listPulls = defineOperation(contract.listPulls, ({ principal }) => pulls.listPulls(principal));
export const createPull = defineOperation(contract.createPull, ({ principal, body }) => pulls.createPull(principal, body));
export const getPull = defineOperation(contract.getPull, ({ principal, params }) => pulls.getPull(principal, params.id));
export const updatePull = defineOperation(contract.updatePull, ({ principal, params, body }) => pulls.updatePull(principal, params.id, body));
export const deletePull = defineOperation(contract.deletePull, ({ principal, params }) => pulls.deletePull(principal, params.id));
export const runPullNow = defineOperation(contract.runPullNow, ({ principal, params }) => jobs.requestPullRun(principal, params.id));
export const listPullRuns = defineOperation(contract.listPullRuns, ({ principal, params }) => pulls.listPullRuns(principal, params.id));
