// The `quarry` command (issue 30 §4): dashboards as code from any CI with only Node.
//   quarry validate <files…>                       offline: file:line:col for every problem
//   quarry pull <dir>                              one <slug>.yaml per dashboard (its draft)
//   quarry plan <dir> [--prune] [--publish]        what push would do, with a meaning-level diff
//   quarry push <dir> [--publish] [--message M] [--prune]
// Options: --json (machine output), --no-color, --detailed-exitcode (plan/push: 2 when changes are present).
// Environment: QUARRY_URL (e.g. https://quarry.example.com), QUARRY_API_KEY (qk_…); on GitHub Actions the
// published versions' source (repository, commit, ref, run URL) is read from GITHUB_* variables.
// Exit codes: 0 done or no changes, 1 invalid manifests (or usage), 2 changes present (--detailed-exitcode),
// 3 conflict (changed since the plan), 4 authentication or scope, 5 server or network.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { formatManifestError, formatPath } from "@/lib/manifest/errors";
import { parseDashboardYaml, parseDatasetYaml, parseWidgetYaml } from "@/lib/manifest-check/parse";
import type { DatasetManifest } from "@/lib/manifest/schema";
import type { DiffEntry, ManifestDiff } from "@/lib/dashboards/versions-contract";
import type { ApplyResult, Plan, PlanItem } from "@/lib/dashboards/plan-contract";

export const EXIT = { ok: 0, invalid: 1, changes: 2, conflict: 3, auth: 4, server: 5 } as const;

export interface CliIo {
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  out: (text: string) => void;
  err: (text: string) => void;
  /** Colour when the output is a terminal (unless NO_COLOR or --no-color). */
  tty: boolean;
}

/** A failure with the exit code it maps to. */
class CliFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const USAGE = `usage: quarry <command> [options]
  validate <files…>                      check manifests offline
  pull <dir>                             write one <slug>.yaml per dashboard of the organization
  plan <dir> [--prune] [--publish]       show what push would change
  push <dir> [--publish] [--message M] [--prune]
options: --json  --no-color  --detailed-exitcode
environment: QUARRY_URL, QUARRY_API_KEY
exit codes: 0 done/no changes, 1 invalid, 2 changes present (--detailed-exitcode), 3 conflict, 4 auth/scope, 5 server/network`;

export async function runQuarry(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        json: { type: "boolean", default: false },
        "no-color": { type: "boolean", default: false },
        "detailed-exitcode": { type: "boolean", default: false },
        publish: { type: "boolean", default: false },
        prune: { type: "boolean", default: false },
        message: { type: "string", short: "m" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (error) {
    io.err(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return EXIT.invalid;
  }
  const { values, positionals } = parsed;
  const [command, ...args] = positionals;
  const paint = painter(io.tty && !values["no-color"] && !io.env.NO_COLOR);
  if (values.help || !command) {
    (values.help ? io.out : io.err)(USAGE);
    return values.help ? EXIT.ok : EXIT.invalid;
  }
  try {
    switch (command) {
      case "validate":
        if (args.length === 0) throw new CliFailure(EXIT.invalid, `validate needs at least one file\n${USAGE}`);
        return validate(args, io, values.json, paint);
      case "pull":
        return await pull(oneDir(args, command), io, values.json);
      case "plan":
      case "push": {
        const dir = oneDir(args, command);
        const options = { json: values.json, prune: values.prune, publish: values.publish, message: values.message, detailed: values["detailed-exitcode"] };
        return command === "plan" ? await plan(dir, io, options, paint) : await push(dir, io, options, paint);
      }
      default:
        throw new CliFailure(EXIT.invalid, `unknown command '${command}'\n${USAGE}`);
    }
  } catch (error) {
    if (error instanceof CliFailure) {
      io.err(error.message);
      return error.code;
    }
    io.err(`quarry: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.server;
  }
}

function oneDir(args: string[], command: string): string {
  if (args.length !== 1) throw new CliFailure(EXIT.invalid, `${command} takes one directory\n${USAGE}`);
  return args[0];
}

// ---------------------------------------------------------------- validate (offline)

function validate(files: string[], io: CliIo, json: boolean, paint: Paint): number {
  const texts = new Map<string, string | Error>();
  for (const file of files) {
    try {
      texts.set(file, fs.readFileSync(file, "utf8"));
    } catch (error) {
      texts.set(file, error as Error);
    }
  }
  const kindOf = (text: string) => (/^kind:\s*dataset\s*$/m.test(text) ? "dataset" : /^kind:\s*widget\s*$/m.test(text) && !/^kind:\s*dashboard\s*$/m.test(text) ? "widget" : "dashboard");
  // Shared datasets given among the files resolve the dashboards' `{ ref }`s; without any, refs are the server's to check (quarry plan).
  const shared = new Map<string, DatasetManifest>();
  for (const text of texts.values()) {
    if (typeof text !== "string" || kindOf(text) !== "dataset") continue;
    const parsed = parseDatasetYaml(text);
    if (parsed.ok) shared.set(parsed.value.metadata.id, parsed.value);
  }
  const results = files.map((file) => {
    const text = texts.get(file)!;
    if (typeof text !== "string") return { file, ok: false, errors: [{ line: 1, column: 1, path: "", message: `cannot read: ${text.message}` }] };
    // A widget file starts with `kind: widget`, a shared dataset's with `kind: dataset`; anything else is read as a dashboard.
    const kind = kindOf(text);
    const result = kind === "dataset" ? parseDatasetYaml(text) : kind === "widget" ? parseWidgetYaml(text) : parseDashboardYaml(text, { sharedDatasets: shared.size > 0 ? shared : "unchecked" });
    if (result.ok) return { file, ok: true, errors: [] };
    return { file, ok: false, errors: result.errors.map((e) => ({ line: e.line, column: e.column, path: formatPath(e.path), message: e.message, text: formatManifestError(e, file) })) };
  });
  if (json) io.out(JSON.stringify({ valid: results.every((r) => r.ok), files: results.map(({ file, ok, errors }) => ({ file, ok, errors: errors.map(({ line, column, path, message }) => ({ line, column, path, message })) })) }, null, 2));
  else {
    for (const r of results) {
      if (r.ok) io.out(`${r.file}: ${paint.green("ok")}`);
      else for (const e of r.errors) io.out(paint.red("text" in e && e.text ? e.text : `${r.file}:${e.line}:${e.column} ${e.message}`));
    }
  }
  return results.every((r) => r.ok) ? EXIT.ok : EXIT.invalid;
}

// ---------------------------------------------------------------- the API

interface Api {
  get<T>(pathAndQuery: string): Promise<T>;
  post<T>(pathAndQuery: string, body: unknown): Promise<T>;
}

function api(io: CliIo): Api {
  const base = io.env.QUARRY_URL?.replace(/\/+$/, "");
  const key = io.env.QUARRY_API_KEY;
  if (!base) throw new CliFailure(EXIT.auth, "QUARRY_URL is not set (e.g. https://quarry.example.com)");
  if (!key) throw new CliFailure(EXIT.auth, "QUARRY_API_KEY is not set (an organization API key, qk_…)");
  const send = async <T>(method: string, pathAndQuery: string, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await io.fetch(`${base}${pathAndQuery}`, {
        method,
        headers: { authorization: `Bearer ${key}`, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      throw new CliFailure(EXIT.server, `cannot reach ${base}: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (res.ok) return json as T;
    const detail = (json as { detail?: unknown } | undefined)?.detail;
    const said = typeof detail === "string" ? detail : Array.isArray(detail) ? detail.map((d: { msg?: string }) => d.msg ?? JSON.stringify(d)).join("\n  ") : text.slice(0, 300);
    const where = `${method} ${pathAndQuery}: ${res.status}`;
    if (res.status === 401 || res.status === 403) throw new CliFailure(EXIT.auth, `${where} ${said}`);
    if (res.status === 409) throw new CliFailure(EXIT.conflict, `${where} changed since the plan; plan again and review:\n  ${said}`);
    if (res.status === 422) throw new CliFailure(EXIT.invalid, `${where} invalid:\n  ${said}`);
    throw new CliFailure(EXIT.server, `${where} ${said}`);
  };
  return { get: (p) => send("GET", p), post: (p, body) => send("POST", p, body) };
}

// ---------------------------------------------------------------- pull

async function pull(dir: string, io: CliIo, json: boolean): Promise<number> {
  const client = api(io);
  const slugs: { id: string; slug: string }[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = await client.get<{ items: { id: string; slug: string }[]; total: number }>(`/api/v1/custom-dashboards?limit=200&offset=${offset}`);
    slugs.push(...page.items);
    if (offset + page.items.length >= page.total || page.items.length === 0) break;
  }
  fs.mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const { id, slug } of slugs) {
    const dashboard = await client.get<{ spec_yaml: string }>(`/api/v1/custom-dashboards/${encodeURIComponent(id)}`);
    const file = path.join(dir, `${slug}.yaml`);
    fs.writeFileSync(file, dashboard.spec_yaml.endsWith("\n") ? dashboard.spec_yaml : `${dashboard.spec_yaml}\n`);
    written.push(file);
  }
  if (json) io.out(JSON.stringify({ files: written }, null, 2));
  else io.out(`pulled ${written.length} dashboard(s) into ${dir}`);
  return EXIT.ok;
}

// ---------------------------------------------------------------- plan and push

interface PlanOptions {
  json: boolean;
  prune: boolean;
  publish: boolean;
  message?: string;
  detailed: boolean;
}

/** The `<slug>.yaml` / `.yml` files of a directory (not its subdirectories), in name order. */
function readDir(dir: string): { path: string; content: string }[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => /\.ya?ml$/i.test(n)).sort();
  } catch (error) {
    throw new CliFailure(EXIT.invalid, `cannot read ${dir}: ${(error as Error).message}`);
  }
  return names.map((name) => ({ path: name, content: fs.readFileSync(path.join(dir, name), "utf8") }));
}

const pending = (p: Plan, publish: boolean) => p.changes || (publish && p.publishes);

async function plan(dir: string, io: CliIo, options: PlanOptions, paint: Paint): Promise<number> {
  const files = readDir(dir);
  const result = await api(io).post<Plan>("/api/v1/custom-dashboards/_plan", { files, prune: options.prune });
  if (options.json) io.out(JSON.stringify(result, null, 2));
  else io.out(renderPlan(result, options.publish, paint));
  if (!result.valid) return EXIT.invalid;
  return options.detailed && pending(result, options.publish) ? EXIT.changes : EXIT.ok;
}

async function push(dir: string, io: CliIo, options: PlanOptions, paint: Paint): Promise<number> {
  const client = api(io);
  const files = readDir(dir);
  const planned = await client.post<Plan>("/api/v1/custom-dashboards/_plan", { files, prune: options.prune });
  if (!options.json) io.out(renderPlan(planned, options.publish, paint));
  if (!planned.valid) {
    if (options.json) io.out(JSON.stringify({ plan: planned, applied: null }, null, 2));
    return EXIT.invalid;
  }
  if (!pending(planned, options.publish)) {
    if (options.json) io.out(JSON.stringify({ plan: planned, applied: null }, null, 2));
    else io.out("Nothing to push.");
    return EXIT.ok;
  }
  const source = sourceFromEnv(io.env);
  const applied = await client.post<ApplyResult>("/api/v1/custom-dashboards/_apply", {
    files,
    expected: planned.expected,
    expected_datasets: planned.expected_datasets,
    prune: options.prune,
    publish: options.publish,
    ...(options.message ? { message: options.message } : {}),
    ...(source ? { source } : {}),
  });
  if (options.json) io.out(JSON.stringify({ plan: planned, applied }, null, 2));
  else {
    const done = applied.items.filter((i) => i.action !== "keep" && (i.action !== "unchanged" || i.published));
    for (const d of applied.datasets.filter((x) => x.action !== "unchanged")) io.out(`dataset ${d.id}: ${d.action}, version ${d.version}`);
    for (const i of done) io.out(`${i.slug}: ${i.action}${i.published ? `, published as version ${i.published_version}` : ""}`);
    io.out(paint.bold(`Pushed ${done.length} dashboard(s).`));
  }
  return options.detailed ? EXIT.changes : EXIT.ok;
}

/** Where the manifests came from, on GitHub Actions (other CIs: set the GITHUB_* names or QUARRY_SOURCE_* yourself). */
export function sourceFromEnv(env: CliIo["env"]): Record<string, string> | null {
  const pick = (...names: string[]) => names.map((n) => env[n]).find((v) => v !== undefined && v !== "");
  const repository = pick("QUARRY_SOURCE_REPOSITORY", "GITHUB_REPOSITORY");
  const commit = pick("QUARRY_SOURCE_COMMIT", "GITHUB_SHA");
  const ref = pick("QUARRY_SOURCE_REF", "GITHUB_REF");
  const server = pick("GITHUB_SERVER_URL");
  const runUrl = pick("QUARRY_SOURCE_RUN_URL") ?? (server && repository && env.GITHUB_RUN_ID ? `${server}/${repository}/actions/runs/${env.GITHUB_RUN_ID}` : undefined);
  const source = Object.fromEntries(Object.entries({ repository, commit, ref, run_url: runUrl }).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return Object.keys(source).length > 0 ? source : null;
}

// ---------------------------------------------------------------- human output

interface Paint {
  red: (s: string) => string;
  green: (s: string) => string;
  yellow: (s: string) => string;
  cyan: (s: string) => string;
  bold: (s: string) => string;
  dim: (s: string) => string;
}

function painter(on: boolean): Paint {
  const wrap = (open: number, close: number) => (s: string) => (on ? `\u001b[${open}m${s}\u001b[${close}m` : s);
  return { red: wrap(31, 39), green: wrap(32, 39), yellow: wrap(33, 39), cyan: wrap(36, 39), bold: wrap(1, 22), dim: wrap(2, 22) };
}

const show = (value: unknown) => (value === undefined ? "(none)" : JSON.stringify(value));
const SECTION_NAME: Record<DiffEntry["section"], string> = { dashboard: "dashboard", widgets: "widget", filters: "filter", tabs: "tab", datasets: "dataset" };

/** One line per entry (and per changed field), prefixed like a unified diff so a PR comment's ```diff block colours it. */
export function renderDiff(diff: ManifestDiff, paint: Paint, indent = "    "): string[] {
  const lines: string[] = [];
  for (const e of diff.entries) {
    const what = e.section === "dashboard" ? "dashboard settings" : `${SECTION_NAME[e.section]} ${e.id}`;
    if (e.change === "added") lines.push(paint.green(`+${indent}${what}`));
    else if (e.change === "removed") lines.push(paint.red(`-${indent}${what}`));
    else {
      lines.push(paint.yellow(`~${indent}${what}${e.change === "moved" ? " (moved)" : ""}`));
      for (const f of e.fields) lines.push(paint.yellow(`~${indent}  ${f.path}: ${show(f.before)} → ${show(f.after)}`));
    }
  }
  if (diff.unparsed) lines.push(paint.dim(` ${indent}(a side does not validate: compared as written)`));
  return lines;
}

export function renderPlan(p: Plan, publish: boolean, paint: Paint): string {
  const lines: string[] = [];
  const symbol: Record<PlanItem["action"], string> = { create: "+", update: "~", unchanged: "=", delete: "-", keep: " ", invalid: "!" };
  const colour: Record<PlanItem["action"], (s: string) => string> = { create: paint.green, update: paint.yellow, unchanged: paint.dim, delete: paint.red, keep: paint.dim, invalid: paint.red };
  for (const item of p.items) {
    const publishNote = publish && item.file && item.action !== "invalid" && item.publish_needed ? ", will publish" : "";
    lines.push(colour[item.action](`${symbol[item.action]} ${paint.bold(item.slug)} (${item.action === "keep" ? "not in the files, kept" : item.action}${publishNote})${item.file ? `  ${item.file}` : ""}`));
    for (const e of item.errors) lines.push(paint.red(`!     ${e.file}:${e.line}:${e.column} ${e.path ? `${e.path}: ` : ""}${e.message}`));
    if (item.action === "create" || item.action === "update") lines.push(...renderDiff(item.diff_vs_draft ?? emptyDiff, paint));
    else if (publish && item.publish_needed && item.diff_vs_published) {
      lines.push(paint.dim("      against the published version:"));
      lines.push(...renderDiff(item.diff_vs_published, paint));
    }
    for (const c of item.checks) lines.push((c.severity === "error" ? paint.red : paint.yellow)(`!     ${c.severity} [${c.kind}]${c.widget ? ` ${c.widget}:` : ""} ${c.message}`));
  }
  for (const d of p.datasets) {
    const action = d.action as PlanItem["action"];
    lines.push(colour[action](`${symbol[action]} ${paint.bold(`dataset ${d.id || "?"}`)} (${d.action})  ${d.file}`));
    for (const e of d.errors) lines.push(paint.red(`!     ${e.file}:${e.line}:${e.column} ${e.path ? `${e.path}: ` : ""}${e.message}`));
    for (const c of d.changes) lines.push(paint.yellow(`      ${c.kind} ${c.column}: ${c.change}${c.successor ? ` → ${c.successor}` : ""}`));
    for (const r of d.readers) {
      const values = (v: typeof r.before) => (v === null ? "—" : v.error ? `(${v.error})` : v.rows.map((row) => Object.values(row).join(" ")).join("; ") || "no rows");
      lines.push((r.changed ? paint.yellow : paint.dim)(`      reads it: ${r.kind} ${r.dashboard}/${r.widget ?? ""}${r.name ? ` (${r.name})` : ""}: ${values(r.before)} → ${values(r.after)}`));
    }
  }
  const count = (a: PlanItem["action"]) => p.items.filter((i) => i.action === a).length;
  const publishing = p.items.filter((i) => i.file && i.action !== "invalid" && i.publish_needed).length;
  lines.push("");
  lines.push(
    paint.bold(
      p.valid
        ? `Plan: ${count("create")} to create, ${count("update")} to update, ${count("delete")} to delete, ${count("unchanged")} unchanged${publish ? `, ${publishing} to publish` : ""}.`
        : `Plan is invalid: ${count("invalid")} file(s) with errors, ${p.items.reduce((n, i) => n + i.checks.filter((c) => c.severity === "error").length, 0)} failed check(s).`,
    ),
  );
  return lines.join("\n");
}

const emptyDiff: ManifestDiff = { changed: false, summary: { added: 0, removed: 0, changed: 0, moved: 0 }, entries: [], unparsed: false };
