import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as one from "@/app/api/v1/custom-dashboards/[id]/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as embed from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import * as versions from "@/app/api/v1/custom-dashboards/[id]/versions/route";
import * as seed from "@/app/api/v1/custom-dashboards/%5Fseed/route";
import * as planRoute from "@/app/api/v1/custom-dashboards/%5Fplan/route";
import * as applyRoute from "@/app/api/v1/custom-dashboards/%5Fapply/route";
import * as apiKeys from "@/app/api/v1/api-keys/route";
import { getDb } from "@/lib/db/client";
import { getQueue } from "@/lib/job-queue";
import { ROLLUP_QUEUE } from "@/lib/rollups/jobs";
import type { PlanItem } from "@/lib/dashboards/plan-contract";
import { call, tokenFor } from "@/test/helpers";
import { reformatYaml } from "@/test/support/reformat-yaml";

const SMALL = fs.readFileSync(path.join(import.meta.dirname, "fixtures/small-dashboard.yaml"), "utf8");
const SQL_WIDGET = (query: string) =>
  `---\nversion: "1.0"\nkind: widget\nmetadata: { id: raw, name: Raw }\nspec:\n  component: table\n  layout: { x: 0, y: 9, w: 6, h: 3 }\n  data:\n    kind: sql\n    query: "${query}"\n`;

/** The small dashboard with a chart whose click drills through as given. */
const withDrill = (drill: string) =>
  `${SMALL.replace("widgets: [location, period, revenue_kpi, by_channel, note]", "widgets: [location, period, revenue_kpi, by_channel, note, trend]")}
---
version: "1.0"
kind: widget
metadata: { id: trend, name: Trend }
spec:
  component: echarts
  layout: { x: 0, y: 8, w: 12, h: 4 }
  data: { kind: dataset, dataset: sales, columns: [order_date, channel, revenue], mappings: { x: order_date, y: revenue } }
  display: { echarts: { option: { series: [{ type: line }] } } }
  on_click:
    drill_through: ${drill}
`;

let admin: string, analyst: string, globex: string;

type File = { path: string; content: string };

/** What `quarry pull` writes: one `<slug>.yaml` per dashboard, its draft. */
async function pull(token = admin): Promise<File[]> {
  const listed = await call(list.GET, "GET", "/api/v1/custom-dashboards?limit=200", { token });
  expect(listed.status).toBe(200);
  const files: File[] = [];
  for (const d of listed.json.items as { id: string; slug: string }[]) {
    const full = await call(one.GET, "GET", { token, params: { id: d.id } });
    files.push({ path: `dashboards/${d.slug}.yaml`, content: full.json.spec_yaml });
  }
  return files;
}

const plan = (files: File[], extra: Record<string, unknown> = {}, token = admin) => call(planRoute.POST, "POST", { token, body: { files, ...extra } });
const apply = (files: File[], expected: unknown, extra: Record<string, unknown> = {}, token = admin) => call(applyRoute.POST, "POST", { token, body: { files, expected, ...extra } });
const itemOf = (res: { json: { items: PlanItem[] } }, slug: string): PlanItem => res.json.items.find((i) => i.slug === slug)!;

beforeAll(async () => {
  [admin, analyst, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")]);
  expect((await call(seed.POST, "POST", { token: admin })).status).toBeLessThan(300);
  const made = await call(list.POST, "POST", { token: admin, body: { name: "Small", slug: "small", spec_yaml: SMALL } });
  expect(made.status, made.text).toBe(201);
});

describe("plan", () => {
  it("round trip: pull then plan shows no changes, also after reformatting every file", async () => {
    const files = await pull();
    expect(files.map((f) => f.path).sort()).toEqual(["dashboards/sample-sales.yaml", "dashboards/small.yaml"]);
    for (const variant of [files, files.map((f) => ({ ...f, content: reformatYaml(f.content) }))]) {
      const res = await plan(variant);
      expect(res.status, res.text).toBe(200);
      expect(res.json).toMatchObject({ valid: true, changes: false });
      expect(res.json.items.map((i: { action: string }) => i.action)).toEqual(["unchanged", "unchanged"]);
      for (const item of res.json.items) {
        expect(item.diff_vs_draft).toMatchObject({ changed: false, entries: [] });
        expect(item.errors).toEqual([]);
        expect(item.checks.filter((c: { severity: string }) => c.severity === "error")).toEqual([]);
      }
      // The sample is published as it is; `small` never was.
      expect(itemOf(res, "sample-sales")).toMatchObject({ publish_needed: false, diff_vs_published: { changed: false } });
      expect(itemOf(res, "small")).toMatchObject({ publish_needed: true, diff_vs_published: null });
    }
  });

  it("answers create / update with diffs, every validation error with file:line:col, and SQL checked under the read-only role", async () => {
    const files = [
      { path: "small.yaml", content: SMALL.replace("layout: { x: 3, y: 2, w: 6, h: 4 }", "layout: { x: 6, y: 2, w: 6, h: 4 }") },
      // Passes the allow-list (its names resolve) and fails only in the database: text + integer has no operator.
      { path: "new-one.yaml", content: SMALL + SQL_WIDGET("SELECT o.channel, o.channel + 1 AS wrong FROM orders o") },
      { path: "broken.yaml", content: SMALL.replace("component: kpi", "component: gauge-ish").replace("dataset: sales\n    columns: [channel", "dataset: nope\n    columns: [channel") },
      { path: "Bad_Name.yaml", content: SMALL },
    ];
    const res = await plan(files);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ valid: false, changes: true });
    expect(itemOf(res, "small")).toMatchObject({ action: "update", diff_vs_draft: { summary: { moved: 1 }, entries: [{ section: "widgets", id: "by_channel", change: "moved" }] } });
    const created = itemOf(res, "new-one");
    expect(created).toMatchObject({ action: "create", base: null, dashboard_id: null, publish_needed: true });
    expect(created.checks).toContainEqual({ kind: "sql", severity: "error", widget: "raw", message: expect.stringMatching(/operator does not exist/) });
    const broken = itemOf(res, "broken");
    expect(broken.action).toBe("invalid");
    expect(broken.errors.length).toBeGreaterThanOrEqual(2);
    for (const e of broken.errors) expect(e).toMatchObject({ file: "broken.yaml", line: expect.any(Number), column: expect.any(Number) });
    expect(itemOf(res, "Bad_Name").errors[0].message).toMatch(/not a dashboard slug/);
    // Dashboards no file names are left alone unless prune.
    expect(itemOf(res, "sample-sales")).toMatchObject({ action: "keep", file: null });
    expect(itemOf(await plan(files, { prune: true }), "sample-sales")).toMatchObject({ action: "delete" });
    expect(res.json.expected).toMatchObject({ small: { draft_revision: 1, published_version: null }, "new-one": null });
  });

  it("warns about embeds whose locked filters would disappear and public dashboards the change reaches", async () => {
    const made = await call(list.POST, "POST", { token: admin, body: { name: "Embedded", slug: "embedded", spec_yaml: SMALL } });
    expect((await call(publish.POST, "POST", { token: admin, params: { id: made.json.id } })).status).toBe(200);
    expect((await call(embed.POST, "POST", { token: admin, params: { id: made.json.id }, body: { locked_filters: { location: "loc_acme_bos" } } })).status).toBe(201);
    const withoutLocation = SMALL.replace(/---\nversion: "1.0"\nkind: widget\nmetadata: \{ id: location, name: Location \}[\s\S]*?(?=---\n)/, "")
      .replace("widgets: [location, period,", "widgets: [period,")
      .replace("public: false", "public: true");
    const res = await plan([{ path: "embedded.yaml", content: withoutLocation }]);
    expect(res.status, res.text).toBe(200);
    const item = itemOf(res, "embedded");
    expect(item.errors).toEqual([]);
    expect(item.checks).toContainEqual(expect.objectContaining({ kind: "embed", severity: "warning", message: expect.stringMatching(/locks the filter 'location'/) }));
    expect(item.checks).toContainEqual(expect.objectContaining({ kind: "public", severity: "warning", message: expect.stringMatching(/makes this dashboard public/) }));
    expect(item.diff_vs_published).toMatchObject({ changed: true });
  });

  it("is for editors, and another organization's plan sees none of acme's dashboards", async () => {
    expect((await plan([], {}, analyst)).status).toBe(403);
    const res = await plan([{ path: "small.yaml", content: SMALL }], {}, globex);
    expect(res.status).toBe(200);
    expect(res.json.items.map((i: { slug: string }) => i.slug)).not.toContain("sample-sales");
    expect(itemOf(res, "small")).toMatchObject({ action: "create", base: null });
  });
});

describe("apply", () => {
  it("writes every dashboard in one transaction, publishing with message and source", async () => {
    const files = [
      { path: "small.yaml", content: SMALL.replace("layout: { x: 3, y: 2, w: 6, h: 4 }", "layout: { x: 6, y: 2, w: 6, h: 4 }") },
      { path: "made-by-ci.yaml", content: SMALL },
    ];
    const planned = await plan(files);
    const res = await apply(files, planned.json.expected, { publish: true, message: "Ship it", source: { repository: "acme/dashboards", commit: "abcdef1234567" } });
    expect(res.status, res.text).toBe(200);
    const small = res.json.items.find((i: { slug: string }) => i.slug === "small");
    const made = res.json.items.find((i: { slug: string }) => i.slug === "made-by-ci");
    expect(small).toMatchObject({ action: "update", draft_revision: 2, published_version: 1, published: true });
    expect(made).toMatchObject({ action: "create", published_version: 1, published: true });
    const history = await call(versions.GET, "GET", { token: admin, params: { id: made.dashboard_id } });
    expect(history.json.items[0]).toMatchObject({ message: "Ship it", source: { repository: "acme/dashboards", commit: "abcdef1234567", path: "made-by-ci.yaml" } });
    // Planned again: nothing to do, nothing to publish.
    const again = await plan(files);
    expect(again.json.items.filter((i: { file: string | null }) => i.file).map((i: { action: string; publish_needed: boolean }) => [i.action, i.publish_needed])).toEqual([["unchanged", false], ["unchanged", false]]);
  });

  it("refuses with 409 naming the dashboard a UI edit changed between plan and apply, and writes nothing", async () => {
    const files = [
      { path: "small.yaml", content: SMALL },
      { path: "second-new.yaml", content: SMALL },
    ];
    const planned = await plan(files);
    expect(planned.json.changes).toBe(true);
    const small = await call(one.GET, "GET", { token: admin, params: { id: "small" } });
    // Someone edits `small` in the editor after the plan was reviewed.
    expect((await call(one.PUT, "PUT", { token: admin, params: { id: "small" }, body: { name: "Edited in the UI" } })).status).toBe(200);
    const res = await apply(files, planned.json.expected, { publish: true });
    expect(res.status, res.text).toBe(409);
    expect(res.json.detail).toEqual([{ loc: ["body", "expected", "small"], msg: expect.stringMatching(/^small: draft edited/), type: "changed_since_plan" }]);
    const after = await call(one.GET, "GET", { token: admin, params: { id: "small" } });
    expect(after.json.draft_revision).toBe(small.json.draft_revision + 1);
    expect(after.json.spec_yaml).toBe(small.json.spec_yaml);
    expect((await call(one.GET, "GET", { token: admin, params: { id: "second-new" } })).status).toBe(404);
    // Another push in between is a change too: a dashboard created since the plan.
    const stale = await plan([{ path: "raced.yaml", content: SMALL }]);
    expect((await apply([{ path: "raced.yaml", content: SMALL }], stale.json.expected)).status).toBe(200);
    const second = await apply([{ path: "raced.yaml", content: SMALL.replace("Small sales", "Raced") }], stale.json.expected);
    expect(second.status).toBe(409);
    expect(second.json.detail[0].msg).toMatch(/raced: created since the plan/);
  });

  it("a key without dashboards:publish can apply but not publish; a file with errors is 422 with its line and column", async () => {
    const made = await call(apiKeys.POST, "POST", { token: admin, body: { name: "CI writer", scopes: ["dashboards:read", "dashboards:write"] } });
    const key = made.json.key;
    const files = [{ path: "keyed.yaml", content: SMALL }];
    const planned = await plan(files, {}, key);
    expect(planned.status).toBe(200);
    const refused = await apply(files, planned.json.expected, { publish: true }, key);
    expect(refused.status).toBe(403);
    expect(refused.json.detail).toMatch(/dashboards:publish/);
    expect((await call(one.GET, "GET", { token: admin, params: { id: "keyed" } })).status).toBe(404);
    expect((await apply(files, planned.json.expected, {}, key)).status).toBe(200);
    const reader = await call(apiKeys.POST, "POST", { token: admin, body: { name: "CI reader", scopes: ["dashboards:read"] } });
    expect((await apply(files, planned.json.expected, {}, reader.json.key)).status).toBe(403);

    const broken = [{ path: "keyed.yaml", content: SMALL.replace("component: kpi", "component: gauge-ish") }];
    const invalid = await apply(broken, (await plan(broken)).json.expected);
    expect(invalid.status).toBe(422);
    expect(invalid.json.detail[0]).toMatchObject({ type: "manifest", line: expect.any(Number), column: expect.any(Number), msg: expect.stringMatching(/^keyed\.yaml:\d+:\d+ /) });
  });

  it("refuses what the editor refuses: a drill-through to a dashboard that does not exist is 422 naming it, and nothing is written", async () => {
    const spec = withDrill("{ dashboard: nowhere }");
    const saved = await call(list.POST, "POST", { token: admin, body: { name: "Drills", slug: "drills", spec_yaml: spec } });
    expect(saved.status).toBe(422);
    const [editorItem] = saved.json.detail;
    expect(editorItem.msg).toMatch(/^\d+:\d+ no dashboard has slug 'nowhere' in this organization$/);
    const files = [{ path: "dashboards/drills.yaml", content: spec }];
    const planned = await plan(files);
    const res = await apply(files, planned.json.expected, { publish: true });
    expect(res.status, res.text).toBe(422);
    expect(res.json.detail).toEqual([
      { loc: ["body", "files", 0, "content", expect.any(String)], msg: `dashboards/drills.yaml:${editorItem.msg}`, type: "manifest", line: editorItem.line, column: editorItem.column },
    ]);
    expect((await call(one.GET, "GET", { token: admin, params: { id: "drills" } })).status).toBe(404);
  });

  it("checks drill targets against what the whole push leaves: a target it creates is found, even from a file listed after the one that drills to it", async () => {
    const files = [
      { path: "drills.yaml", content: withDrill("{ dashboard: drill-target, filters: [{ filter: period, field: order_date }] }") },
      { path: "drill-target.yaml", content: SMALL },
    ];
    const res = await apply(files, (await plan(files)).json.expected);
    expect(res.status, res.text).toBe(200);
    expect(Object.fromEntries(res.json.items.map((i: { slug: string; action: string }) => [i.slug, i.action]))).toMatchObject({ drills: "create", "drill-target": "create" });
  });

  it("asks for the organization's rollup refresh after deleting a dashboard, as the endpoint's delete does", async () => {
    const boss = await getQueue();
    const queued = () => boss.getQueueSize(ROLLUP_QUEUE);
    const deletes: [string, (slug: string) => Promise<number>][] = [
      ["endpoint", async (slug) => (await call(one.DELETE, "DELETE", { token: admin, params: { id: slug } })).status],
      [
        "apply",
        async (slug) => {
          const files = (await pull()).filter((f) => !f.path.endsWith(`/${slug}.yaml`));
          const res = await apply(files, (await plan(files, { prune: true })).json.expected, { prune: true });
          expect(res.json.items.filter((i: { action: string }) => i.action === "delete").map((i: { slug: string }) => i.slug)).toEqual([slug]);
          return res.status;
        },
      ],
    ];
    for (const [how, remove] of deletes) {
      const slug = `rolled-${how}`;
      expect((await call(list.POST, "POST", { token: admin, body: { name: slug, slug, spec_yaml: SMALL } })).status).toBe(201);
      expect((await call(publish.POST, "POST", { token: admin, params: { id: slug } })).status).toBe(200);
      // Publishing queued a refresh of its own: an empty queue shows whether the delete asks for one.
      await boss.purgeQueue(ROLLUP_QUEUE);
      expect(await queued()).toBe(0);
      expect(await remove(slug)).toBeLessThan(300);
      expect(await queued(), how).toBe(1);
    }
  });

  it("deletes only with prune, and never another organization's dashboards", async () => {
    const { system } = await getDb();
    const count = async (org: string) => Number((await system.query<{ n: string }>("SELECT count(*) AS n FROM dashboards WHERE org_id = $1", [org]))[0].n);
    const globexBefore = await count("org_globex");
    const files = [{ path: "small.yaml", content: SMALL }];
    const kept = await plan(files);
    expect((await apply(files, kept.json.expected)).status).toBe(200);
    expect(await count("org_acme")).toBeGreaterThan(1);
    const pruning = await plan(files, { prune: true });
    const res = await apply(files, pruning.json.expected, { prune: true });
    expect(res.status, res.text).toBe(200);
    expect(res.json.items.filter((i: { action: string }) => i.action === "delete").length).toBeGreaterThan(0);
    expect(await count("org_acme")).toBe(1);
    expect(await count("org_globex")).toBe(globexBefore);
    // Globex pruning with no files deletes only globex's.
    const globexPlan = await plan([], { prune: true }, globex);
    expect((await apply([], globexPlan.json.expected, { prune: true }, globex)).status).toBe(200);
    expect(await count("org_acme")).toBe(1);
  });
});
