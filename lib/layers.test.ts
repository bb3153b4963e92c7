import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/*
 * lib/api is the HTTP layer: the route wrapper, the error-to-status table, request gates. Everything
 * else under lib/ (services, jobs, configuration, authentication) knows nothing of HTTP, so it never
 * imports lib/api. The one exception: the endpoint declaration (lib/api/endpoint.ts, zod only), which
 * a contract declares its endpoints with and an operation (lib/operation.ts) carries, because an
 * endpoint declaration is the contract. Tests may drive
 * behaviour through the HTTP layer.
 */

const LIB = path.join(process.cwd(), "lib");
const API = path.join(LIB, "api");
const ENDPOINT = path.join(API, "endpoint");
const CONTRACT = /(^|-)contract\.ts$/;
const OPERATION_LAYER = path.join(LIB, "operation.ts");

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return full === API || entry.name === "generated" ? [] : sources(full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** Every module `file` (with its `text`) imports, statically, re-exported or dynamically, as an absolute path without extension. */
function importsOf(file: string, text = fs.readFileSync(file, "utf8")): string[] {
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)["']([^"']+)["']/g)].map((m) => m[1]);
  return specifiers.flatMap((s) => (s.startsWith("@/") ? [path.join(process.cwd(), s.slice(2))] : s.startsWith(".") ? [path.resolve(path.dirname(file), s)] : []));
}

const intoApi = (target: string) => target === API || target.startsWith(API + path.sep);

describe("layers", () => {
  it("nothing under lib/ outside lib/api imports lib/api (contracts and the operation layer may import the endpoint declaration)", () => {
    const files = sources(LIB);
    expect(files.length).toBeGreaterThan(50);
    const offenders = files.flatMap((file) =>
      importsOf(file)
        .filter(intoApi)
        .filter((target) => !((CONTRACT.test(path.basename(file)) || file === OPERATION_LAYER) && target === ENDPOINT))
        .map((target) => `${path.relative(process.cwd(), file)} -> ${path.relative(process.cwd(), target)}`),
    );
    expect(offenders).toEqual([]);
  });

  it("sees an import into lib/api in every spelling (the check can fail)", () => {
    const probe = path.join(LIB, "auth", "probe.ts");
    const spellings = ['import { x } from "@/lib/api/route";', 'export { x } from "../api/errors";', 'const m = await import("@/lib/api/caller");', 'import "@/lib/api/route";'];
    for (const line of spellings) expect(importsOf(probe, line).some(intoApi), line).toBe(true);
    expect(importsOf(probe, 'import { x } from "@/lib/apiary";').some(intoApi)).toBe(false);
  });
});
