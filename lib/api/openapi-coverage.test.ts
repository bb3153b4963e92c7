import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildOpenApi } from "./openapi";

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
        const source = fs.readFileSync(full, "utf8");
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
  const doc = buildOpenApi("http://localhost:3000");

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
});
