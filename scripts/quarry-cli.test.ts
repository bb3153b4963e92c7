import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { NextRequest } from "next/server";
import { beforeAll, describe, expect, it } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as one from "@/app/api/v1/custom-dashboards/[id]/route";
import * as planRoute from "@/app/api/v1/custom-dashboards/%5Fplan/route";
import * as applyRoute from "@/app/api/v1/custom-dashboards/%5Fapply/route";
import * as versions from "@/app/api/v1/custom-dashboards/[id]/versions/route";
import * as seed from "@/app/api/v1/custom-dashboards/%5Fseed/route";
import * as apiKeys from "@/app/api/v1/api-keys/route";
import * as apiKey from "@/app/api/v1/api-keys/[id]/route";
import { call, tokenFor } from "@/test/helpers";
import { reformatYaml } from "@/test/support/reformat-yaml";
import { EXIT, runQuarry, sourceFromEnv } from "./quarry-cli";

/*
 * The CLI against the real route handlers: its fetch is answered by them in this process (the Next.js
 * router replaced by a table of the routes it calls), over this test file's database. The bin itself
 * is spawned as a process for what needs no server: offline validation and the exit codes of a
 * missing configuration and an unreachable server.
 */

type Handler = (req: NextRequest, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const ROUTES: [RegExp, string, Handler, string[]][] = [
  [/^\/api\/v1\/custom-dashboards$/, "GET", list.GET, []],
  [/^\/api\/v1\/custom-dashboards\/_plan$/, "POST", planRoute.POST, []],
  [/^\/api\/v1\/custom-dashboards\/_apply$/, "POST", applyRoute.POST, []],
  [/^\/api\/v1\/custom-dashboards\/([^/]+)$/, "GET", one.GET, ["id"]],
];

const routedFetch: typeof fetch = async (input, init) => {
  const url = new URL(String(input));
  const method = init?.method ?? "GET";
  for (const [pattern, m, handler, names] of ROUTES) {
    const match = pattern.exec(url.pathname);
    if (!match || m !== method) continue;
    const params = Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(match[i + 1])]));
    const req = new NextRequest(url, { method, headers: init?.headers, body: init?.body as BodyInit | undefined, duplex: "half" } as ConstructorParameters<typeof NextRequest>[1]);
    return handler(req, { params: Promise.resolve(params) });
  }
  return new Response(JSON.stringify({ detail: "no such route in the test table" }), { status: 404 });
};

async function quarry(args: string[], key: string, env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runQuarry(args, { env: { QUARRY_URL: "http://quarry.test", QUARRY_API_KEY: key, ...env }, fetch: routedFetch, out: (t) => out.push(t), err: (t) => err.push(t), tty: false });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const SMALL = fs.readFileSync(path.join(process.cwd(), "lib/dashboards/fixtures/small-dashboard.yaml"), "utf8");
let admin: string;
let publisher: { id: string; key: string };
let writer: string;
let dir: string;

async function makeKey(name: string, scopes: string[]) {
  const made = await call(apiKeys.POST, "POST", { token: admin, body: { name, scopes } });
  expect(made.status, made.text).toBe(201);
  return { id: made.json.id as string, key: made.json.key as string };
}

beforeAll(async () => {
  admin = await tokenFor("acme", "admin");
  expect((await call(seed.POST, "POST", { token: admin })).status).toBeLessThan(300);
  publisher = await makeKey("CI publish", ["dashboards:read", "dashboards:write", "dashboards:publish"]);
  writer = (await makeKey("CI write", ["dashboards:read", "dashboards:write"])).key;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-cli-"));
});

describe("quarry CLI against the API", () => {
  it("pull writes one <slug>.yaml per dashboard; plan then shows no changes (exit 0 with --detailed-exitcode), also reformatted", async () => {
    const pulled = await quarry(["pull", dir], publisher.key);
    expect(pulled.code, pulled.err).toBe(EXIT.ok);
    expect(fs.readdirSync(dir)).toEqual(["sample-sales.yaml"]);
    const planned = await quarry(["plan", dir, "--detailed-exitcode"], publisher.key);
    expect(planned.code, planned.out + planned.err).toBe(EXIT.ok);
    expect(planned.out).toMatch(/Plan: 0 to create, 0 to update, 0 to delete, 1 unchanged\./);
    const file = path.join(dir, "sample-sales.yaml");
    fs.writeFileSync(file, reformatYaml(fs.readFileSync(file, "utf8")));
    expect((await quarry(["plan", dir, "--detailed-exitcode"], publisher.key)).code).toBe(EXIT.ok);
  });

  it("plan exits 2 with --detailed-exitcode when changes are present (0 without), and prints a coloured-or-plain diff; --json for machines", async () => {
    fs.writeFileSync(path.join(dir, "small.yaml"), SMALL);
    const file = path.join(dir, "sample-sales.yaml");
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/Sales overview/, "Sales overview (CI)"));
    const detailed = await quarry(["plan", dir, "--detailed-exitcode"], publisher.key);
    expect(detailed.code).toBe(EXIT.changes);
    expect(detailed.out).toMatch(/^\+ small \(create\)/m);
    expect(detailed.out).toMatch(/^~ sample-sales \(update\)/m);
    expect(detailed.out).toContain('metadata.name: "Sales overview" → "Sales overview (CI)"');
    expect(detailed.out).not.toContain("\u001b[");
    expect((await quarry(["plan", dir], publisher.key)).code).toBe(EXIT.ok);
    const json = await quarry(["plan", dir, "--json"], publisher.key);
    expect(JSON.parse(json.out)).toMatchObject({ valid: true, changes: true });
    const coloured = await runQuarry(["plan", dir], { env: { QUARRY_URL: "http://quarry.test", QUARRY_API_KEY: publisher.key }, fetch: routedFetch, out: (t) => expect(t).toContain("\u001b[32m"), err: () => {}, tty: true });
    expect(coloured).toBe(EXIT.ok);
  });

  it("push --publish writes and publishes with the message and the CI's source; a key without dashboards:publish exits 4", async () => {
    const refused = await quarry(["push", dir, "--publish"], writer);
    expect(refused.code).toBe(EXIT.auth);
    expect(refused.err).toMatch(/dashboards:publish/);
    expect((await call(one.GET, "GET", { token: admin, params: { id: "small" } })).status).toBe(404);

    const env = { GITHUB_REPOSITORY: "acme/dashboards", GITHUB_SHA: "0123456789abcdef0123456789abcdef01234567", GITHUB_REF: "refs/heads/main", GITHUB_SERVER_URL: "https://github.com", GITHUB_RUN_ID: "42" };
    const pushed = await quarry(["push", dir, "--publish", "--message", "Add the small dashboard"], publisher.key, env);
    expect(pushed.code, pushed.out + pushed.err).toBe(EXIT.ok);
    expect(pushed.out).toMatch(/small: create, published as version 1/);
    const small = await call(one.GET, "GET", { token: admin, params: { id: "small" } });
    const history = await call(versions.GET, "GET", { token: admin, params: { id: small.json.id } });
    expect(history.json.items[0]).toMatchObject({
      message: "Add the small dashboard",
      source: { repository: "acme/dashboards", commit: env.GITHUB_SHA, ref: "refs/heads/main", path: "small.yaml", run_url: "https://github.com/acme/dashboards/actions/runs/42" },
      published_by: { kind: "api_key", name: "CI publish" },
    });
    const again = await quarry(["push", dir, "--publish", "--detailed-exitcode"], publisher.key);
    expect(again.code).toBe(EXIT.ok);
    expect(again.out).toContain("Nothing to push.");
  });

  it("exits 1 for invalid manifests (with file:line:col), 3 for a conflict, 4 for a revoked key", async () => {
    fs.writeFileSync(path.join(dir, "broken.yaml"), SMALL.replace("component: kpi", "component: gauge-ish"));
    const invalid = await quarry(["plan", dir], publisher.key);
    expect(invalid.code).toBe(EXIT.invalid);
    expect(invalid.out).toMatch(/broken\.yaml:\d+:\d+ /);
    expect((await quarry(["push", dir], publisher.key)).code).toBe(EXIT.invalid);
    fs.rmSync(path.join(dir, "broken.yaml"));

    // A UI edit lands between push's plan and its apply.
    fs.writeFileSync(path.join(dir, "small.yaml"), SMALL.replace("Small sales", "Small sales v2"));
    const racing: typeof fetch = async (input, init) => {
      if (String(input).endsWith("/_apply")) await call(one.PUT, "PUT", { token: admin, params: { id: "small" }, body: { name: "Edited in the UI" } });
      return routedFetch(input, init);
    };
    const out: string[] = [];
    const code = await runQuarry(["push", dir], { env: { QUARRY_URL: "http://quarry.test", QUARRY_API_KEY: publisher.key }, fetch: racing, out: () => {}, err: (t) => out.push(t), tty: false });
    expect(code).toBe(EXIT.conflict);
    expect(out.join("\n")).toMatch(/small: draft edited/);

    expect((await call(apiKey.DELETE, "DELETE", { token: admin, params: { id: publisher.id } })).status).toBe(204);
    expect((await quarry(["plan", dir], publisher.key)).code).toBe(EXIT.auth);
  });

  it("reads the source of a published version from GitHub Actions' variables", () => {
    expect(sourceFromEnv({})).toBeNull();
    expect(sourceFromEnv({ GITHUB_REPOSITORY: "a/b", GITHUB_SHA: "abc1234", QUARRY_SOURCE_REF: "v1" })).toEqual({ repository: "a/b", commit: "abc1234", ref: "v1" });
  });
});

describe("the quarry bin, spawned", () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    // From another directory, as CI runs it from the dashboards' repository.
    promisify(execFile)(process.execPath, [path.resolve("scripts/quarry.mjs"), ...args], { cwd: os.tmpdir(), env: { PATH: process.env.PATH ?? "", NODE_ENV: "test", ...env } }).then(
      (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }),
    );

  it("validates offline from any directory: 0 when valid, 1 with file:line:col otherwise", async () => {
    const ok = await run(["validate", path.resolve("docs/manifests/sample-dashboard.yaml")]);
    expect(ok.code, ok.err).toBe(0);
    const bad = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "quarry-bin-")), "bad.yaml");
    fs.writeFileSync(bad, 'version: 1.0\nkind: dashboard\n');
    const invalid = await run(["validate", bad]);
    expect(invalid.code).toBe(1);
    expect(invalid.out).toContain(`${bad}:1:10 version:`);
  });

  it("exits 4 without QUARRY_API_KEY and 5 when the server cannot be reached", async () => {
    expect((await run(["plan", "."], { QUARRY_URL: "http://127.0.0.1:9" })).code).toBe(4);
    const unreachable = await run(["plan", path.resolve("docs/manifests")], { QUARRY_URL: "http://127.0.0.1:9", QUARRY_API_KEY: "qk_x" });
    expect(unreachable.code).toBe(5);
    expect(unreachable.err).toMatch(/cannot reach/);
  });
});
