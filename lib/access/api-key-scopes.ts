import { z } from "zod";

/**
 * What an organization API key may do (issue 30). A key's principal is an admin of its organization
 * capped by its scopes: an endpoint answers a key only when the key holds one of the scopes the endpoint
 * requires (`requiredScopes`), and then only what an admin could. Endpoints that require none refuse
 * keys (403): notification administration, sessions, organization settings and API keys themselves.
 */
export const ApiKeyScope = z.enum(["dashboards:read", "dashboards:write", "dashboards:publish", "embeds:write", "documents:read", "documents:write", "data:write"]);
export type ApiKeyScope = z.infer<typeof ApiKeyScope>;

/** An endpoint's rule for keys: one scope, any of several, or "none" (keys refused). */
export type KeyScopeRule = ApiKeyScope | readonly ApiKeyScope[] | "none";

/** The areas whose endpoints keys reach by default: the first tag names it. */
const AREAS: Record<string, { read: ApiKeyScope; write: ApiKeyScope }> = {
  Dashboards: { read: "dashboards:read", write: "dashboards:write" },
  Documents: { read: "documents:read", write: "documents:write" },
  // Chat answers from the organization's documents and changes nothing.
  Chat: { read: "documents:read", write: "documents:read" },
};

/**
 * The scopes of which a key must hold one to call an endpoint; empty when keys may not call it. An
 * endpoint's own `keyScope` decides; without one, its first tag and method do: GET of an area is
 * `<area>:read`, any other method `<area>:write`; other areas refuse keys. Publishing and embedding are
 * declared on their endpoints (`dashboards:publish`, `embeds:write`), as are reads sent by POST (a
 * dashboard query, a search).
 */
export function requiredScopes(endpoint: { method: string; tags: readonly string[]; keyScope?: KeyScopeRule }): readonly ApiKeyScope[] {
  const rule = endpoint.keyScope;
  if (rule === "none") return [];
  if (typeof rule === "string") return [rule];
  if (rule) return rule;
  const area = AREAS[endpoint.tags[0] ?? ""];
  if (!area) return [];
  return [endpoint.method === "get" ? area.read : area.write];
}
