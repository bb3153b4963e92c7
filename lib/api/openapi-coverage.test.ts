import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { GET as openApiJson } from "@/app/openapi.json/route";
import { loadConfig } from "@/lib/config/schema";
import { embedDashboard } from "@/lib/dashboards/contract";
import { call } from "@/test/helpers";
import { buildOpenApi } from "./openapi";
import { ENDPOINTS } from "./registry";

const APP_DIR = path.join(process.cwd(), "app");
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** Every (method, OpenAPI path) that a route.ts under app/ exports, except the catch-all 404 and next-auth. */
function routeHandlers(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === "route.ts") {
        const segments = path.relative(APP_DIR, dir).split(path.sep).filter((s) => !/^\(.*\)$/.test(s));
        if (segments.some((s) => s.startsWith("[..."))) continue;
        if (segments[0] === "api" && segments[1] === "auth") continue;
        const urlPath = "/" + segments.map((s) => decodeURIComponent(s).replace(/^\[(.+)\]$/, "{$1}")).join("/");
        // `refuseMethod` exports answer 405 for methods the path does not serve (see lib/api/allowed-methods.ts).
        const source = fs.readFileSync(full, "utf8").replace(/export\s*\{[^}]*\brefuseMethod as[^}]*\}/g, "");
        for (const method of METHODS) {
          if (new RegExp(`export\\s+(const|async function|function)\\s+${method}\\b|export\\s*\\{[^}]*\\bas\\s+${method}\\b|export\\s*\\{[^}]*\\b${method}\\b`).test(source)) {
            found.push(`${method.toLowerCase()} ${urlPath}`);
          }
        }
      }
    }
  };
  walk(APP_DIR);
  return found.sort();
}

describe("OpenAPI document", () => {
  const doc = buildOpenApi({ production: "http://localhost:3000" });

  it("describes every route handler", () => {
    const documented = new Set(Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`)));
    const handlers = routeHandlers();
    expect(handlers.length).toBeGreaterThan(0);
    expect(handlers.filter((h) => !documented.has(h))).toEqual([]);
  });

  it("is OpenAPI 3.1 with resolvable component references", () => {
    expect(doc.openapi).toBe("3.1.0");
    const refs = JSON.stringify(doc).match(/"#\/components\/schemas\/[^"]+"/g) ?? [];
    for (const ref of refs) {
      const name = ref.slice('"#/components/schemas/'.length, -1);
      expect(doc.components.schemas, name).toHaveProperty(name);
    }
  });

  it("marks a request body required only where the schema refuses an absent body", () => {
    type Operation = { requestBody?: { required: boolean } };
    const operation = (method: string, path: string) => (doc.paths as Record<string, Record<string, Operation>>)[path][method];
    expect(operation("post", "/api/v1/custom-dashboards/{id}/embed").requestBody?.required).toBe(false);
    expect(operation("post", "/api/v1/custom-dashboards").requestBody?.required).toBe(true);
    for (const ep of ENDPOINTS.filter((e) => e.body)) {
      expect(operation(ep.method, ep.path).requestBody?.required, `${ep.method} ${ep.path}`).toBe(!ep.body!.safeParse(undefined).success);
    }
  });

  it("describes the embed errors the code answers: 409 unpublished, 403 embedding not allowed", () => {
    const embed = (doc.paths as Record<string, Record<string, { description: string; responses: Record<string, unknown> }>>)[embedDashboard.path].post;
    expect(embed.description).toMatch(/409 while it has no published version/);
    expect(embed.description).toMatch(/allow_embed: true \(403 otherwise\)/);
    expect(embed.description).not.toMatch(/allow_embed: true \(409/);
    expect(Object.keys(embed.responses)).toEqual(expect.arrayContaining(["403", "409"]));
  });
});

describe("OpenAPI servers", () => {
  it("lists the serving origin (relative), then the production and the staging address from QUARRY_PUBLIC_URL and QUARRY_STAGING_URL", () => {
    const config = loadConfig({ QUARRY_PUBLIC_URL: "https://quarry.example.com", QUARRY_STAGING_URL: "https://staging.quarry.example.com" });
    const self = { url: "/", description: "This server (the origin serving this document)" };
    expect(buildOpenApi({ production: config.publicUrl, staging: config.stagingUrl }).servers).toEqual([
      self,
      { url: "https://quarry.example.com", description: "Production" },
      { url: "https://staging.quarry.example.com", description: "Staging" },
    ]);
    const productionOnly = loadConfig({ QUARRY_PUBLIC_URL: "https://quarry.example.com" });
    expect(buildOpenApi({ production: productionOnly.publicUrl, staging: productionOnly.stagingUrl }).servers).toEqual([self, { url: "https://quarry.example.com", description: "Production" }]);
    expect(() => loadConfig({ QUARRY_STAGING_URL: "not a url" })).toThrow(/QUARRY_STAGING_URL/);
  });

  it("serves them at /openapi.json", async () => {
    const res = await call(openApiJson, "GET", "/openapi.json");
    expect(res.status).toBe(200);
    // "Try it out" on /docs opened at another host than QUARRY_PUBLIC_URL (127.0.0.1 for localhost) calls that host.
    expect(res.json.servers[0].url).toBe("/");
    expect(res.json.servers[1]).toEqual({ url: expect.stringMatching(/^https?:\/\//), description: "Production" });
  });
});
