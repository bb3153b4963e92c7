import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";

export const openApiDocument = defineEndpoint({
  method: "get",
  path: "/openapi.json",
  summary: "This OpenAPI 3.1 document",
  tags: ["Meta"],
  access: "public",
  response: z.record(z.string(), z.unknown()),
});

export const healthCheck = defineEndpoint({
  method: "get",
  path: "/api/health",
  summary: "Liveness: the database is open and answers",
  tags: ["Meta"],
  access: "public",
  response: z.object({ status: z.literal("ok"), database: z.enum(["pglite", "postgres"]) }),
  errors: [503],
});

export const readinessCheck = defineEndpoint({
  method: "get",
  path: "/api/ready",
  summary: "Readiness for a load balancer: start-up work is done, the database answers, and its schema is this build's",
  tags: ["Meta"],
  access: "public",
  response: z.object({
    status: z.literal("ready"),
    database: z.enum(["pglite", "postgres"]),
    migrations: z.number().int(),
    user_sql: z
      .object({ status: z.enum(["ok", "refused"]), logins: z.enum(["per_organization", "shared"]).optional(), reason: z.string().optional() })
      .describe(
        "Whether SQL written in dashboards can run: on a server it needs a login per organization confined to quarry_reader (docs/deploy.md); `refused` says why; `shared`: the operator's one login serves every organization, which are then not walled off from each other's sessions",
      ),
  }),
  errors: [503],
});
