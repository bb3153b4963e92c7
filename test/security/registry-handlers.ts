import type { Endpoint } from "@/lib/endpoint";
import type { call } from "@/test/helpers";
import { loadRouteModules } from "@/scripts/generate-routes";

export type Handler = Parameters<typeof call>[0];

/** `GET /api/v1/x/{id}`: how the matrices name an endpoint of the registry. */
export const endpointKey = (endpoint: Endpoint) => `${endpoint.method.toUpperCase()} ${endpoint.path}`;

let served: Promise<Map<Endpoint, Handler>> | undefined;

/** The handler that serves an endpoint, found among the route modules by the endpoint it carries. */
export async function handlerOf(endpoint: Endpoint): Promise<Handler> {
  served ??= loadRouteModules().then((routes) => new Map(routes.flatMap((r) => r.handlers).map((h) => [h.endpoint, h.handler as unknown as Handler])));
  const handler = (await served).get(endpoint);
  if (!handler) throw new Error(`${endpoint.method} ${endpoint.path}: no route file serves it`);
  return handler;
}
