import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { pageOf, pageQuery } from "@/lib/pagination";
import { ApiKeyScope } from "@/lib/access/api-key-scopes";

const tags = ["API keys"];

export const ApiKeyIdParams = z.object({ id: z.string().min(1).max(200).describe("API key id (`apk_…`)") });

export const CreateApiKeyBody = z
  .object({
    name: z.string().trim().min(1).max(100).describe("What the key is for, e.g. 'CI deploy'"),
    scopes: z
      .array(ApiKeyScope)
      .min(1)
      .max(ApiKeyScope.options.length)
      .refine((s) => new Set(s).size === s.length, "Scopes must not repeat")
      .describe("What the key may do; it never does more than an admin could"),
    location_ids: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(500)
      .nullable()
      .optional()
      .describe("Locations of the organization the key may see; absent or null: every location the creating admin sees"),
    expires_at: z.iso.datetime({ offset: true }).nullable().optional().describe("ISO 8601; absent or null: the key does not expire"),
  })
  .strict()
  .meta({ id: "CreateApiKey" });
export type CreateApiKeyBody = z.output<typeof CreateApiKeyBody>;

export const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().describe("The key's first characters (`qk_<public id>_`), to recognise it; the secret is never shown again"),
    scopes: z.array(ApiKeyScope),
    location_ids: z.array(z.string()).nullable().describe("null: every location"),
    expires_at: z.iso.datetime().nullable(),
    created_by: z.string(),
    created_by_name: z.string().nullable().describe("The creating member's name, as the page shows it; null once that member is gone"),
    created_at: z.iso.datetime(),
    last_used_at: z.iso.datetime().nullable().describe("To the minute"),
    revoked_at: z.iso.datetime().nullable(),
  })
  .meta({ id: "ApiKey" });

export const CreatedApiKey = ApiKeySchema.extend({
  key: z.string().describe("The key, `qk_<public id>_<secret>`: shown in this answer only; send it as `Authorization: Bearer <key>`"),
}).meta({ id: "CreatedApiKey" });

export const ApiKeyList = pageOf(ApiKeySchema).meta({ id: "ApiKeyList" });

export const listApiKeys = defineEndpoint({
  method: "get",
  path: "/api/v1/api-keys",
  summary: "List the organization's API keys",
  description: "Every API key of the caller's organization, revoked ones included, newest first. The keys themselves are never shown again.",
  tags,
  access: "admin",
  keyScope: "none",
  query: pageQuery,
  response: ApiKeyList,
});

export const createApiKey = defineEndpoint({
  method: "post",
  path: "/api/v1/api-keys",
  summary: "Create an API key",
  description:
    "Creates an organization API key and answers it once (`key`); only a keyed hash is stored. The key acts as an admin of the organization capped by its scopes and its locations, until it expires or is revoked. API keys cannot create keys.",
  tags,
  access: "admin",
  keyScope: "none",
  body: CreateApiKeyBody,
  response: CreatedApiKey,
  status: 201,
  rateLimit: { limit: 30, windowSeconds: 60 },
});

export const revokeApiKey = defineEndpoint({
  method: "delete",
  path: "/api/v1/api-keys/{id}",
  summary: "Revoke an API key",
  description: "Revokes a key at once, on every server; the key stays listed with `revoked_at`. A key of another organization is not found (404).",
  tags,
  access: "admin",
  keyScope: "none",
  params: ApiKeyIdParams,
  status: 204,
  errors: [404],
});
