import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { REGISTRY_FILE, loadRouteModules, renderRegistry } from "@/scripts/generate-routes";
import type { Endpoint } from "@/lib/endpoint";
import { ENDPOINTS } from "./registry";

describe("route files and the endpoint registry", () => {
  it("every handler lives in the folder of its endpoint's path, under its method, and serves a registered endpoint; every registered endpoint has one handler", async () => {
    const served = new Map<Endpoint, string>();
    const misplaced: string[] = [];
    for (const route of await loadRouteModules()) {
      for (const { method, endpoint } of route.handlers) {
        const where = `${method} ${route.path}`;
        if (endpoint.method.toUpperCase() !== method || endpoint.path !== route.path) misplaced.push(`${where} serves ${endpoint.method.toUpperCase()} ${endpoint.path}`);
        if (served.has(endpoint)) misplaced.push(`${where} serves the endpoint of ${served.get(endpoint)} again`);
        served.set(endpoint, where);
      }
    }
    expect(misplaced).toEqual([]);
    const name = (e: Endpoint) => `${e.method.toUpperCase()} ${e.path}`;
    expect([...served.keys()].filter((e) => !ENDPOINTS.includes(e)).map(name)).toEqual([]);
    expect(ENDPOINTS.filter((e) => !served.has(e)).map(name)).toEqual([]);
  });

  it("lib/api/registry.ts is what `npm run generate:routes` writes from the route files", async () => {
    const expected = await renderRegistry(await loadRouteModules());
    // On failure: run `npm run generate:routes` and commit lib/api/registry.ts.
    expect(fs.readFileSync(REGISTRY_FILE, "utf8")).toBe(expected);
  });
});
