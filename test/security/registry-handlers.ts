import type { Endpoint } from "@/lib/api/endpoint";
import type { call } from "@/test/helpers";

export type Handler = Parameters<typeof call>[0];

/** `GET /api/v1/x/{id}`: how the matrices name an endpoint of the registry. */
export const endpointKey = (endpoint: Endpoint) => `${endpoint.method.toUpperCase()} ${endpoint.path}`;

/** The route module of an endpoint: `/api/v1/x/{id}` lives in `app/api/v1/x/[id]/route.ts` (`_seed` is escaped as `%5Fseed`). */
export async function handlerOf(endpoint: Endpoint): Promise<Handler> {
  const dir = endpoint.path.replace(/\{(\w+)\}/g, "[$1]").replace(/\/_/g, "/%5F");
  const mod = (await import(/* @vite-ignore */ `@/app${dir}/route.ts`)) as Record<string, Handler>;
  const handler = mod[endpoint.method.toUpperCase()];
  if (!handler) throw new Error(`${endpoint.method} ${endpoint.path}: no handler exported`);
  return handler;
}
