import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as embed from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as embedQuery from "@/app/api/v1/embed/query/route";
import * as publicQuery from "@/app/api/v1/public/query/route";
import { loadPublic } from "@/lib/dashboards/embed-page";
import { MAX_JSON_DEPTH, jsonDepthExceeds, parseJsonInput } from "@/lib/json";
import { call, tokenFor } from "@/test/helpers";

// Issue 26 §7: a filter value nested 5,000 deep overflowed the stack in JSON.stringify (a 500), also
// for anonymous callers. Every JSON body is now refused past MAX_JSON_DEPTH with a 422 before it is parsed.
const YAML = fs
  .readFileSync(path.join(import.meta.dirname, "../../lib/dashboards/fixtures/filter-states.yaml"), "utf8")
  .replace("public: false", "public: true");

const nested = (depth: number): unknown => {
  let value: unknown = "store";
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};
/** 5,000 levels as text: JSON.stringify of the value itself would overflow in the test. */
const DEEP_TEXT = `${"[".repeat(5000)}"store"${"]".repeat(5000)}`;
const deepBody = (fields: Record<string, unknown>) => `${JSON.stringify(fields).slice(0, -1)},"filters":{"channel":${DEEP_TEXT}}}`;

let admin: string;
let analyst: string;
let dashboardId: string;
let embedToken: string;

beforeAll(async () => {
  [admin, analyst] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst")]);
  const created = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "Deep", slug: "json-depth", spec_yaml: YAML } });
  expect(created.status).toBe(201);
  dashboardId = created.json.id;
  expect((await call(publish.POST, "POST", { token: admin, params: { id: dashboardId } })).status).toBe(200);
  const made = await call(embed.POST, "POST", { token: admin, params: { id: dashboardId }, body: {} });
  expect(made.status).toBe(201);
  embedToken = made.json.token;
});

describe("JSON nesting depth (issue 26 §7)", () => {
  it("measures depth without recursion, skipping brackets inside strings", () => {
    expect(jsonDepthExceeds(DEEP_TEXT)).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify(nested(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify({ a: "[[[[[[\\\"{{{{".repeat(100) }), 3)).toBe(false);
    expect(() => parseJsonInput(DEEP_TEXT)).toThrow(/nested deeper than 64 levels/);
    expect(parseJsonInput('{"a":[1,{"b":"]]]"}]}')).toEqual({ a: [1, { b: "]]]" }] });
  });

  const refused = (res: { status: number; json: { detail: { loc: string[]; msg: string; type: string }[] } }) => {
    expect(res.status).toBe(422);
    expect(res.json.detail).toEqual([{ loc: ["body"], msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels; send a flatter value`, type: "json_too_deep" }]);
  };

  it("answers 422 to a 5,000-deep filter value on the signed-in dashboard query", async () => {
    refused(await call(query.POST, "POST", { token: analyst, params: { id: dashboardId }, rawBody: deepBody({ widget_ids: ["revenue_kpi"] }), headers: { "content-type": "application/json" } }));
  });

  it("answers 422 to it on the anonymous public and embed queries", async () => {
    const headers = { "content-type": "application/json" };
    refused(await call(publicQuery.POST, "POST", "/api/v1/public/query", { rawBody: deepBody({ org: "acme", slug: "json-depth" }), headers }));
    refused(await call(embedQuery.POST, "POST", "/api/v1/embed/query", { rawBody: deepBody({ token: embedToken }), headers }));
  });

  it("still serves a value at the limit", async () => {
    const atLimit = await call(publicQuery.POST, "POST", "/api/v1/public/query", { body: { org: "acme", slug: "json-depth", filters: { channel: nested(MAX_JSON_DEPTH - 3) }, widget_ids: ["revenue_kpi"] } });
    expect(atLimit.status).toBe(200);
  });

  it("renders the public page when the URL carries a 5,000-deep filter value", async () => {
    const page = await loadPublic("acme", "json-depth", { "f.channel": DEEP_TEXT });
    if (!page?.ok) throw new Error("expected the public page");
    expect(page.filters.channel).toBe(DEEP_TEXT);
    expect(page.results.revenue_kpi).toBeDefined();
  });
});
