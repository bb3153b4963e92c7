import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/*
 * lib/api is the HTTP layer: the route wrapper, the error-to-status table, request gates. Everything
 * else under lib/ (services, jobs, configuration, authentication, contracts) knows nothing of HTTP, so
 * it never imports lib/api. The endpoint declaration contracts declare with and operations carry sits
 * beside the operation layer (lib/endpoint.ts), below lib/api. Tests may drive behaviour through the HTTP layer.
 */

const LIB = path.join(process.cwd(), "lib");
const API = path.join(LIB, "api");

/** The source files under `dir` whose names match `extensions`: no tests, no generated Prisma client. */
function sources(dir: string, extensions = /\.tsx?$/): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "generated" ? [] : sources(full, extensions);
    return extensions.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** Every module `file` (with its `text`) imports, statically, re-exported or dynamically, as an absolute path without extension. */
function importsOf(file: string, text = fs.readFileSync(file, "utf8")): string[] {
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)["']([^"']+)["']/g)].map((m) => m[1]);
  return specifiers.flatMap((s) => (s.startsWith("@/") ? [path.join(process.cwd(), s.slice(2))] : s.startsWith(".") ? [path.resolve(path.dirname(file), s)] : []));
}

const intoApi = (target: string) => target === API || target.startsWith(API + path.sep);

describe("layers", () => {
  it("nothing under lib/ outside lib/api imports lib/api", () => {
    const files = sources(LIB).filter((file) => !intoApi(file));
    expect(files.length).toBeGreaterThan(50);
    const offenders = files.flatMap((file) =>
      importsOf(file)
        .filter(intoApi)
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

/*
 * Notifications are rooms along the data's path (lib/notifications/README.md), arrows one way: admin (what an admin
 * configures and does) → pipeline (scheduler, evaluate, deliver, queue, worker) → settings (what the pipeline reads of
 * the organization's configuration) → transports (sending). A room imports itself and rooms below it, never one above.
 * Under them all the domain's vocabulary (channel kinds, the clock, the zod contract); above them the operations and
 * the user's own inbox.
 */
const NOTIFICATIONS = path.join(LIB, "notifications");
const NOTIFICATION_ROOMS = ["transports", "settings", "pipeline", "admin"];
const NOTIFICATION_VOCABULARY = ["channel-kinds", "clock", "contract"];

/** A file's (or an extensionless import target's) room in lib/notifications and its floor, 0 the lowest; null outside. */
function notificationRoom(file: string): { room: string; floor: number } | null {
  const relative = path.relative(NOTIFICATIONS, file);
  if (relative.startsWith("..") || path.isAbsolute(relative)) return null;
  const [first, ...rest] = relative.split(path.sep);
  if (rest.length > 0) {
    const index = NOTIFICATION_ROOMS.indexOf(first);
    return { room: first, floor: index === -1 ? Number.NaN : index + 1 };
  }
  if (NOTIFICATION_VOCABULARY.includes(first.replace(/\.tsx?$/, ""))) return { room: "vocabulary", floor: 0 };
  return { room: "edge", floor: NOTIFICATION_ROOMS.length + 1 };
}

/** Each import of `file` that runs sideways or up between the rooms of lib/notifications, as "file -> target". */
function notificationArrowsUp(file: string, text?: string): string[] {
  const from = notificationRoom(file);
  if (!from) return [];
  return importsOf(file, text)
    .filter((target) => {
      const to = notificationRoom(target);
      return to !== null && to.room !== from.room && !(to.floor < from.floor);
    })
    .map((target) => `${path.relative(process.cwd(), file)} -> ${path.relative(process.cwd(), target)}`);
}

describe("notification rooms", () => {
  it("every folder under lib/notifications is a known room", () => {
    const folders = fs.readdirSync(NOTIFICATIONS, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(folders.sort()).toEqual([...NOTIFICATION_ROOMS].sort());
  });

  it("admin → pipeline → settings → transports: no room imports one beside or above it", () => {
    const files = sources(NOTIFICATIONS);
    expect(files.length).toBeGreaterThan(20);
    expect(files.flatMap((file) => notificationArrowsUp(file))).toEqual([]);
  });

  it("sees an arrow running up in every spelling (the check can fail)", () => {
    const pipeline = path.join(NOTIFICATIONS, "pipeline", "probe.ts");
    const upward = ['import { createRule } from "@/lib/notifications/admin/rules";', 'export { x } from "../admin/rules";', 'await import("@/lib/notifications/operations");', 'import "@/lib/notifications/inbox";'];
    for (const line of upward) expect(notificationArrowsUp(pipeline, line), line).toHaveLength(1);
    const transports = path.join(NOTIFICATIONS, "transports", "probe.ts");
    expect(notificationArrowsUp(transports, 'import { resolveChannel } from "@/lib/notifications/settings/channels";')).toHaveLength(1);
    const downward = ['import { resolveChannel } from "@/lib/notifications/settings/channels";', 'import { sendExternal } from "../transports/send";', 'import { QUEUES } from "@/lib/job-queue";', 'import { ChannelKind } from "@/lib/notifications/channel-kinds";', 'import { log } from "@/lib/log";'];
    for (const line of downward) expect(notificationArrowsUp(pipeline, line), line).toEqual([]);
  });
});

/*
 * Documents are rooms by the stage of a document's path (lib/documents/README.md), arrows one way: files (the
 * record, upload, download) and search each sit above indexing, which sits above extract (text and chunks). Each
 * room names the rooms it may import; none imports a room beside or above it. Under them all the domain's shared
 * low pieces at its root (the contracts, the record's API shape, file types, the ZIP directory), which import no
 * room; above them the edge (operations, the demo seed), which no room imports.
 */
const DOCUMENTS = path.join(LIB, "documents");
const DOCUMENT_ROOMS: Record<string, string[]> = {
  files: ["indexing"],
  search: ["indexing", "extract"],
  indexing: ["extract"],
  extract: [],
};
const DOCUMENTS_EDGE = ["operations", "demo"];

/** A file's (or an extensionless import target's) place in lib/documents: a room, "base" or "edge"; null outside. */
function documentPlace(file: string): string | null {
  const relative = path.relative(DOCUMENTS, file);
  if (relative.startsWith("..") || path.isAbsolute(relative)) return null;
  const [first, ...rest] = relative.split(path.sep);
  if (rest.length > 0) return first;
  return DOCUMENTS_EDGE.includes(first.replace(/\.tsx?$/, "")) ? "edge" : "base";
}

/** Each import of `file` that runs sideways or up between the places of lib/documents, as "file -> target". */
function documentArrowsUp(file: string, text?: string): string[] {
  const from = documentPlace(file);
  if (!from || from === "edge") return [];
  return importsOf(file, text)
    .filter((target) => {
      const to = documentPlace(target);
      if (to === null || to === from || to === "base") return false;
      return from === "base" || !(DOCUMENT_ROOMS[from] ?? []).includes(to);
    })
    .map((target) => `${path.relative(process.cwd(), file)} -> ${path.relative(process.cwd(), target)}`);
}

describe("document rooms", () => {
  it("every folder under lib/documents is a known room", () => {
    const folders = fs.readdirSync(DOCUMENTS, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(folders.sort()).toEqual(Object.keys(DOCUMENT_ROOMS).sort());
  });

  it("files and search → indexing → extract, over the shared base: no room imports one beside or above it", () => {
    const files = sources(DOCUMENTS);
    expect(files.length).toBeGreaterThan(30);
    expect(files.flatMap((file) => documentArrowsUp(file))).toEqual([]);
  });

  it("sees an arrow running up or sideways in every spelling (the check can fail)", () => {
    const indexing = path.join(DOCUMENTS, "indexing", "probe.ts");
    const upward = ['import { searchDocuments } from "@/lib/documents/search/search";', 'export { x } from "../files/upload";', 'await import("@/lib/documents/operations");', 'import "@/lib/documents/demo";'];
    for (const line of upward) expect(documentArrowsUp(indexing, line), line).toHaveLength(1);
    expect(documentArrowsUp(path.join(DOCUMENTS, "files", "probe.ts"), 'import { locatePassage } from "../search/page-locator";')).toHaveLength(1);
    expect(documentArrowsUp(path.join(DOCUMENTS, "document-record.ts"), 'import { indexJobRunning } from "./indexing/index-document";')).toHaveLength(1);
    const downward = ['import { extractAndChunk } from "../extract/offthread-client";', 'import { toDocumentRecord } from "../document-record";', 'import type { DocumentType } from "@/lib/documents/file-types";', 'import { StoreSchedule } from "./store-schedule";', 'import { log } from "@/lib/log";'];
    for (const line of downward) expect(documentArrowsUp(indexing, line), line).toEqual([]);
  });
});

/*
 * The dashboard engine is four rooms, arrows one way (docs/dashboards-engine.md): lib/manifest (the language: the
 * schema, the YAML source with positions, errors, guards, value formats) under lib/query (compiling, filters, dates,
 * demo data, the KPI catalog, formulas, SQL text, execution, rollup definitions and routing), under lib/rollups
 * (building, refresh jobs, the registry) and lib/manifest-check (parse and the checks against the catalog), which
 * import nothing of each other. lib/dashboards and everything else sit above them.
 */
const ENGINE_ROOMS: Record<string, string[]> = {
  manifest: [],
  query: ["manifest"],
  rollups: ["query", "manifest"],
  "manifest-check": ["query", "manifest"],
};
const ENGINE_ABOVE = ["dashboards"];

/** The engine room of a file (or an extensionless import target), or null outside them. */
function engineRoom(file: string): string | null {
  const relative = path.relative(LIB, file);
  if (relative.startsWith("..") || path.isAbsolute(relative)) return null;
  const [first, ...rest] = relative.split(path.sep);
  if (rest.length === 0) return null;
  return first in ENGINE_ROOMS || ENGINE_ABOVE.includes(first) ? first : null;
}

/** Each import of `file` from an engine room into a room beside or above it, as "file -> target". */
function engineArrowsUp(file: string, text?: string): string[] {
  const from = engineRoom(file);
  if (!from || !(from in ENGINE_ROOMS)) return [];
  return importsOf(file, text)
    .filter((target) => {
      const to = engineRoom(target);
      return to !== null && to !== from && !ENGINE_ROOMS[from].includes(to);
    })
    .map((target) => `${path.relative(process.cwd(), file)} -> ${path.relative(process.cwd(), target)}`);
}

describe("dashboard engine rooms", () => {
  it("manifest → query → rollups, manifest-check: no room imports one beside or above it", () => {
    const files = Object.keys(ENGINE_ROOMS).flatMap((room) => sources(path.join(LIB, room)));
    expect(files.length).toBeGreaterThan(30);
    expect(files.flatMap((file) => engineArrowsUp(file))).toEqual([]);
  });

  it("sees an arrow running up or sideways in every spelling (the check can fail)", () => {
    const manifest = path.join(LIB, "manifest", "probe.ts");
    const upward = ['import { KPI_CATALOG } from "@/lib/query/kpi-catalog";', 'export { x } from "../manifest-check/parse";', 'await import("@/lib/rollups/registry");', 'import "@/lib/dashboards/manifest";'];
    for (const line of upward) expect(engineArrowsUp(manifest, line), line).toHaveLength(1);
    const query = path.join(LIB, "query", "probe.ts");
    expect(engineArrowsUp(query, 'import type { ParsedDashboard } from "@/lib/manifest-check/parse";')).toHaveLength(1);
    expect(engineArrowsUp(query, 'import { freshRollups } from "@/lib/rollups/registry";')).toHaveLength(1);
    expect(engineArrowsUp(path.join(LIB, "rollups", "probe.ts"), 'import { parseDashboardYaml } from "@/lib/manifest-check/parse";')).toHaveLength(1);
    expect(engineArrowsUp(path.join(LIB, "manifest-check", "probe.ts"), 'import { declareRollups } from "@/lib/rollups/registry";')).toHaveLength(1);
    const downward = ['import type { Dataset } from "@/lib/manifest/schema";', 'import { SqlParams } from "./filters";', 'import { QueryError } from "@/lib/query/errors";', 'import { log } from "@/lib/log";'];
    for (const line of downward) expect(engineArrowsUp(query, line), line).toEqual([]);
  });
});

/*
 * The folders of the code, each one room (a folder of lib/, a single file at lib/'s root, or app/, components/,
 * scripts/, bench/, a root file), import one another one way only: no two rooms import each other, directly or
 * round a longer circle (`import type` included). What two rooms both need moves down into a room below both;
 * what composes two rooms (the worker: lib/worker.ts) sits above both.
 */
const ROOT = process.cwd();
const CODE_FOLDERS = ["app", "lib", "components", "scripts", "bench"];

/** The room of a file or an extensionless import target: lib/<folder>, lib/<file>, or the top-level folder or file. */
function roomOf(file: string): string {
  const [top, second, ...rest] = path.relative(ROOT, file).split(path.sep);
  if (top === "lib" && second !== undefined) return rest.length > 0 ? `lib/${second}` : `lib/${second.replace(/\.(tsx?|mjs)$/, "")}`;
  return second === undefined ? top.replace(/\.(tsx?|mjs)$/, "") : top;
}

/** Rooms that reach one another round a circle (Tarjan's strongly connected components of more than one room). */
function circles(arrows: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (room: string) => {
    index.set(room, index.size);
    low.set(room, index.get(room)!);
    stack.push(room);
    for (const next of arrows.get(room) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(room, Math.min(low.get(room)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(room, Math.min(low.get(room)!, index.get(next)!));
    }
    if (low.get(room) !== index.get(room)) return;
    const component: string[] = [];
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      component.push(member);
      if (member === room) break;
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const room of arrows.keys()) if (!index.has(room)) visit(room);
  return found;
}

/** room → the rooms its files import, with the imports that make each arrow ("file -> target"). */
function roomArrows(files: string[], read: (file: string) => string = (file) => fs.readFileSync(file, "utf8")) {
  const arrows = new Map<string, Set<string>>();
  const why = new Map<string, string[]>();
  for (const file of files) {
    const from = roomOf(file);
    for (const target of importsOf(file, read(file))) {
      const relative = path.relative(ROOT, target);
      if (relative.startsWith("..")) continue;
      const to = roomOf(target);
      if (to === from) continue;
      arrows.set(from, (arrows.get(from) ?? new Set()).add(to));
      why.set(`${from} -> ${to}`, [...(why.get(`${from} -> ${to}`) ?? []), `${path.relative(ROOT, file)} -> ${relative}`]);
    }
  }
  return { arrows, why };
}

describe("folder rooms", () => {
  it("no two folders import each other, directly or round a circle", () => {
    const files = CODE_FOLDERS.flatMap((folder) => sources(path.join(ROOT, folder), /\.(tsx?|mjs)$/));
    expect(files.length).toBeGreaterThan(300);
    const { arrows, why } = roomArrows(files);
    const found = circles(arrows).map((component) => ({
      rooms: component,
      arrows: [...why.entries()].filter(([arrow]) => component.includes(arrow.split(" -> ")[0]) && component.includes(arrow.split(" -> ")[1])),
    }));
    expect(found).toEqual([]);
  });

  it("finds a circle of two rooms and a longer one (the check can fail)", () => {
    const probe = new Map<string, string>([
      [path.join(ROOT, "lib", "alpha", "a.ts"), 'import { b } from "@/lib/beta/b";'],
      [path.join(ROOT, "lib", "beta", "b.ts"), 'import type { a } from "../alpha/a";'],
      [path.join(ROOT, "lib", "gamma.ts"), 'import { d } from "@/lib/delta/d";'],
      [path.join(ROOT, "lib", "delta", "d.ts"), 'import { e } from "@/lib/epsilon/e";'],
      [path.join(ROOT, "lib", "epsilon", "e.ts"), 'export { g } from "@/lib/gamma";'],
      [path.join(ROOT, "lib", "zeta", "z.ts"), 'import { a } from "@/lib/alpha/a";'],
    ]);
    const { arrows } = roomArrows([...probe.keys()], (file) => probe.get(file)!);
    expect(circles(arrows).map((c) => c.join(" ")).sort()).toEqual(["lib/alpha lib/beta", "lib/delta lib/epsilon lib/gamma"]);
  });
});
