import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Endpoint } from "./endpoint";
import { ENDPOINTS } from "./registry";

const APP_DIR = path.join(process.cwd(), "app");
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** Every route file under app/ but the catch-all 404 and next-auth's own handler. */
function routeFiles(dir = APP_DIR): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name.startsWith("[...") || full === path.join(APP_DIR, "api", "auth") ? [] : routeFiles(full);
    return entry.name === "route.ts" ? [full] : [];
  });
}

/** The URL a folder serves, in OpenAPI form: `app/api/v1/x/[id]/route.ts` → `/api/v1/x/{id}` (`%5F` is an escaped `_`). */
function folderPath(file: string): string {
  const segments = path.relative(APP_DIR, path.dirname(file)).split(path.sep);
  return "/" + segments.map((s) => decodeURIComponent(s).replace(/^\[(\w+)\]$/, "{$1}")).join("/");
}

describe("route files and the endpoint registry", () => {
  it("every handler lives in the folder of its endpoint's path, under its method, and serves a registered endpoint; every registered endpoint has one handler", async () => {
    const served = new Map<Endpoint, string>();
    const misplaced: string[] = [];
    for (const file of routeFiles()) {
      const mod = (await import(/* @vite-ignore */ file)) as Record<string, { endpoint?: Endpoint } | undefined>;
      for (const method of METHODS) {
        const handler = mod[method];
        // `refuseMethod` exports (405 with Allow) carry no endpoint.
        if (!handler?.endpoint) continue;
        const { endpoint } = handler;
        const where = `${method} ${folderPath(file)}`;
        if (endpoint.method.toUpperCase() !== method || endpoint.path !== folderPath(file)) misplaced.push(`${where} serves ${endpoint.method.toUpperCase()} ${endpoint.path}`);
        if (served.has(endpoint)) misplaced.push(`${where} serves the endpoint of ${served.get(endpoint)} again`);
        served.set(endpoint, where);
      }
    }
    expect(misplaced).toEqual([]);
    const name = (e: Endpoint) => `${e.method.toUpperCase()} ${e.path}`;
    expect([...served.keys()].filter((e) => !ENDPOINTS.includes(e)).map(name)).toEqual([]);
    expect(ENDPOINTS.filter((e) => !served.has(e)).map(name)).toEqual([]);
  });
});
