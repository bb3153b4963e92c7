import { z } from "zod";
import { requiredScopes } from "@/lib/access/api-key-scopes";
import type { Endpoint } from "@/lib/endpoint";
import { ENDPOINTS } from "./registry";

type JsonSchema = Record<string, unknown>;

const ErrorBody = z
  .object({
    detail: z.union([
      z.string(),
      z.array(
        z.object({
          loc: z.array(z.union([z.string(), z.number()])),
          msg: z.string(),
          type: z.string(),
          line: z.number().int().optional(),
          column: z.number().int().optional(),
        }),
      ),
    ]),
  })
  .meta({ id: "ErrorResponse" });

const STATUS_TEXT: Record<number, string> = {
  400: "Bad request",
  401: "Missing, expired or invalid bearer token",
  403: "The caller's role may not do this",
  404: "Not found in the caller's organization",
  409: "Conflicts with the current state",
  413: "Body or file too large",
  415: "Unsupported content type",
  422: "Validation error; `detail` lists `{loc, msg, type}`",
  429: "Rate limited; retry after the `Retry-After` seconds",
  503: "A required provider is not configured",
};

/** Where the API is served (SPEC §1: {base_url} and {staging_base_url}). */
export interface OpenApiServers {
  production: string;
  staging?: string | null;
}

/**
 * Builds the OpenAPI 3.1 document from the endpoint declarations. Schemas with
 * a `.meta({ id })` become named components; the rest are inlined.
 */
export function buildOpenApi(servers: OpenApiServers, endpoints: Endpoint[] = ENDPOINTS) {
  const components: Record<string, JsonSchema> = {};
  const convert = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
    const json = z.toJSONSchema(schema, {
      io,
      target: "draft-2020-12",
      unrepresentable: "any",
    }) as JsonSchema;
    return hoistDefs(json, components);
  };

  const paths: Record<string, Record<string, unknown>> = {};
  for (const ep of endpoints) {
    const parameters: unknown[] = [];
    for (const [where, schema] of [["path", ep.params], ["query", ep.query]] as const) {
      if (!schema) continue;
      const json = convert(schema, "input");
      const props = (json.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((json.required as string[] | undefined) ?? []);
      for (const [name, prop] of Object.entries(props)) {
        parameters.push({ name, in: where, required: where === "path" || required.has(name), schema: prop, description: prop.description });
      }
    }
    const responses: Record<string, unknown> = {};
    const ok = String(ep.status ?? 200);
    if (ep.status === 204) responses[ok] = { description: "No content" };
    // With `produces`, `response` describes the body in that type (e.g. one line of an NDJSON stream).
    else if (ep.response) responses[ok] = { description: "Success", content: Object.fromEntries([ep.produces ?? "application/json"].flat().map((type) => [type, { schema: convert(ep.response!, "output") }])) };
    // A file: its bytes, in each type it may come in.
    else responses[ok] = { description: "Success", content: Object.fromEntries([ep.produces ?? "application/octet-stream"].flat().map((type) => [type, { schema: { type: "string", format: "binary" } }])) };
    const errorStatuses = new Set<number>([...(ep.access === "public" ? [] : [401, 403]), ...(ep.params || ep.query || ep.body ? [422] : []), ...(ep.rateLimit ? [429] : []), ...(ep.errors ?? [])]);
    for (const status of [...errorStatuses].sort()) {
      responses[String(status)] = {
        description: STATUS_TEXT[status] ?? "Error",
        content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" } } },
        ...(status === 429 ? { headers: { "Retry-After": { schema: { type: "integer" }, description: "Seconds to wait" } } } : {}),
      };
    }
    const operation: Record<string, unknown> = {
      operationId: operationId(ep),
      summary: ep.summary,
      description: [ep.description, accessNote(ep)].filter(Boolean).join("\n\n"),
      tags: ep.tags,
      parameters,
      responses,
      ...(ep.access === "public" ? { security: [] } : {}),
    };
    if (ep.body) {
      // Required only when the schema refuses an absent body: generated clients may then omit it.
      operation.requestBody = { required: !ep.body.safeParse(undefined).success, content: { "application/json": { schema: convert(ep.body, "input") } } };
    } else if (ep.rawBody) {
      operation.requestBody = { required: true, content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } };
    }
    paths[ep.path] ??= {};
    paths[ep.path][ep.method] = operation;
  }
  components.ErrorResponse = hoistDefs(z.toJSONSchema(ErrorBody, { target: "draft-2020-12" }) as JsonSchema, components);

  return {
    openapi: "3.1.0",
    info: {
      title: "Quarry API",
      version: "1.0.0",
      description:
        "Dashboards as code, document search and notifications. Every call carries `Authorization: Bearer <token>`; " +
        "errors are `{\"detail\": ...}`; timestamps are ISO 8601 UTC. Unknown fields may be added without a version bump.",
    },
    servers: [
      // First, relative: "Try it out" at /docs calls the origin that served this document, whatever host it was
      // opened on (the page's Content-Security-Policy allows only its own origin; issue 32 §6).
      { url: "/", description: "This server (the origin serving this document)" },
      { url: servers.production, description: "Production" },
      ...(servers.staging ? [{ url: servers.staging, description: "Staging" }] : []),
    ],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT or API key",
          description: "A token of the identity provider (JWT), or an organization API key `qk_…` (scopes in each operation's description).",
        },
      },
    },
  };
}

function accessNote(ep: Endpoint): string {
  if (ep.access === "public") return "";
  const scopes = requiredScopes(ep);
  const keys = scopes.length === 0 ? " API keys: refused." : ` API keys: scope ${scopes.map((scope) => `\`${scope}\``).join(" or ")}.`;
  if (ep.access === "user") return `Any signed-in role.${keys}`;
  if (ep.access === "admin") return `Admin only.${keys}`;
  return `Roles: ${ep.access.join(", ")}.${keys}`;
}

function operationId(ep: Endpoint): string {
  const words = ep.path.replace(/^\/api\/v1\//, "").split(/[/{}_.-]+/).filter(Boolean);
  return [ep.method, ...words].map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join("");
}

/** Moves `$defs` (named by `.meta({ id })`) into components and rewrites references. */
function hoistDefs(schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  const { $defs, $schema: _ignored, ...rest } = schema as JsonSchema & { $defs?: Record<string, JsonSchema> };
  for (const [name, def] of Object.entries($defs ?? {})) components[name] = rewriteRefs(def) as JsonSchema;
  return rewriteRefs(rest) as JsonSchema;
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, k === "$ref" && typeof v === "string" ? v.replace("#/$defs/", "#/components/schemas/") : rewriteRefs(v)]),
    );
  }
  return value;
}
