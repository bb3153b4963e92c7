import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as one from "@/app/api/v1/custom-dashboards/[id]/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as versions from "@/app/api/v1/custom-dashboards/[id]/versions/route";
import * as version from "@/app/api/v1/custom-dashboards/[id]/versions/[version]/route";
import * as diff from "@/app/api/v1/custom-dashboards/[id]/versions/[version]/diff/route";
import * as restore from "@/app/api/v1/custom-dashboards/[id]/versions/[version]/restore/route";
import * as apiKeys from "@/app/api/v1/api-keys/route";
import { getDb } from "@/lib/db/client";
import { call, tokenFor } from "@/test/helpers";
import { reformatYaml } from "@/test/support/reformat-yaml";

const SMALL = fs.readFileSync(path.join(import.meta.dirname, "fixtures/small-dashboard.yaml"), "utf8");
const MOVED = SMALL.replace("layout: { x: 3, y: 2, w: 6, h: 4 }", "layout: { x: 6, y: 2, w: 6, h: 4 }");
const RENAMED_KPI = MOVED.replace("metadata: { id: revenue_kpi, name: Revenue }", "metadata: { id: revenue_kpi, name: Gross revenue }");

let admin: string, analyst: string, gm: string, globex: string;

async function keyWith(scopes: string[], name: string): Promise<string> {
  const made = await call(apiKeys.POST, "POST", { token: admin, body: { name, scopes } });
  expect(made.status, made.text).toBe(201);
  return made.json.key;
}

/** A dashboard with three published versions: SMALL by a user, MOVED by a CI key with source metadata, RENAMED_KPI by the user; the draft is RENAMED_KPI. */
async function historyDashboard(slug: string, ciKey: string) {
  const made = await call(list.POST, "POST", { token: admin, body: { name: "History", slug, spec_yaml: SMALL } });
  expect(made.status, made.text).toBe(201);
  const id: string = made.json.id;
  expect((await call(publish.POST, "POST", { token: admin, params: { id } })).status).toBe(200);
  expect((await call(one.PUT, "PUT", { token: admin, params: { id }, body: { spec_yaml: MOVED } })).status).toBe(200);
  const byKey = await call(publish.POST, "POST", {
    token: ciKey,
    params: { id },
    body: { message: "Move the channel table right", source: { repository: "acme/dashboards", commit: "9f1c2e3d4b5a", ref: "refs/heads/main", path: `${slug}.yaml` } },
  });
  expect(byKey.status, byKey.text).toBe(200);
  expect((await call(one.PUT, "PUT", { token: admin, params: { id }, body: { spec_yaml: RENAMED_KPI } })).status).toBe(200);
  expect((await call(publish.POST, "POST", { token: admin, params: { id }, body: { message: "Rename the KPI" } })).status).toBe(200);
  return id;
}

let ciKey: string;
let id: string;

beforeAll(async () => {
  [admin, analyst, gm, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("acme", "general_manager"), tokenFor("globex", "admin")]);
  ciKey = await keyWith(["dashboards:read", "dashboards:write", "dashboards:publish"], "CI publisher");
  id = await historyDashboard("history", ciKey);
});

describe("version history", () => {
  it("lists versions newest first with who published them (user or key name), message and source", async () => {
    const res = await call(versions.GET, "GET", { token: gm, params: { id } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.total).toBe(3);
    expect(res.json.items.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    const [v3, v2, v1] = res.json.items;
    expect(v3).toMatchObject({ message: "Rename the KPI", source: null, is_published: true, published_by: { kind: "user", id: "usr_acme_admin" } });
    expect(v3.published_by.name).toEqual(expect.any(String));
    expect(v2).toMatchObject({
      message: "Move the channel table right",
      source: { repository: "acme/dashboards", commit: "9f1c2e3d4b5a", ref: "refs/heads/main", path: "history.yaml" },
      published_by: { kind: "api_key", name: "CI publisher" },
      is_published: false,
      restored_from: null,
    });
    expect(v2.published_by.id).toMatch(/^apk_/);
    expect(v1).toMatchObject({ message: null, source: null });
    expect(res.json.items[0].published_at).toMatch(/Z$/);
    const page = await call(versions.GET, "GET", `/api/v1/custom-dashboards/${id}/versions?limit=1&offset=1`, { token: admin, params: { id } });
    expect(page.json).toMatchObject({ total: 3, limit: 1, offset: 1, items: [{ version: 2 }] });
  });

  it("reads any version's manifest, by number or as `published`", async () => {
    const v1 = await call(version.GET, "GET", { token: admin, params: { id, version: "1" } });
    expect(v1.status).toBe(200);
    expect(v1.json).toMatchObject({ version: 1, spec_yaml: SMALL, name: "History" });
    const current = await call(version.GET, "GET", { token: admin, params: { id, version: "published" } });
    expect(current.json).toMatchObject({ version: 3, spec_yaml: RENAMED_KPI, is_published: true });
    expect((await call(version.GET, "GET", { token: admin, params: { id, version: "9" } })).status).toBe(404);
    expect((await call(version.GET, "GET", { token: admin, params: { id, version: "first" } })).status).toBe(422);
  });

  it("diffs two versions, and a version and the draft, by meaning", async () => {
    const oneTwo = await call(diff.GET, "GET", `/api/v1/custom-dashboards/${id}/versions/1/diff?to=2`, { token: admin, params: { id, version: "1" } });
    expect(oneTwo.status, oneTwo.text).toBe(200);
    expect(oneTwo.json).toMatchObject({ from: 1, to: 2, changed: true, summary: { added: 0, removed: 0, changed: 0, moved: 1 } });
    expect(oneTwo.json.entries).toEqual([{ section: "widgets", id: "by_channel", change: "moved", fields: [{ path: "spec.layout.x", before: 3, after: 6 }] }]);

    const toDraft = await call(diff.GET, "GET", { token: admin, params: { id, version: "1" } });
    expect(toDraft.json).toMatchObject({ from: 1, to: "draft", summary: { moved: 1, changed: 1 } });
    expect(toDraft.json.entries).toContainEqual({ section: "widgets", id: "revenue_kpi", change: "changed", fields: [{ path: "metadata.name", before: "Revenue", after: "Gross revenue" }] });

    // The draft reformatted (keys reordered, quoting, comments) means the same as the published version.
    expect((await call(one.PUT, "PUT", { token: admin, params: { id }, body: { spec_yaml: reformatYaml(RENAMED_KPI) } })).status).toBe(200);
    const same = await call(diff.GET, "GET", { token: admin, params: { id, version: "published" } });
    expect(same.json).toMatchObject({ from: 3, to: "draft", changed: false, entries: [] });
  });

  it("restores a version as the draft, and restore then diff shows no change against it; history is kept", async () => {
    const restored = await call(restore.POST, "POST", { token: admin, params: { id, version: "1" } });
    expect(restored.status, restored.text).toBe(200);
    expect(restored.json).toMatchObject({ spec_yaml: SMALL, published_version: 3, has_unpublished_changes: true });
    const againstOne = await call(diff.GET, "GET", { token: admin, params: { id, version: "1" } });
    expect(againstOne.json).toMatchObject({ changed: false, entries: [] });
    expect((await call(versions.GET, "GET", { token: admin, params: { id } })).json.total).toBe(3);

    const published = await call(restore.POST, "POST", { token: ciKey, params: { id, version: "2" }, body: { publish: true } });
    expect(published.status, published.text).toBe(200);
    expect(published.json).toMatchObject({ published_version: 4, spec_yaml: MOVED, has_unpublished_changes: false });
    const v4 = await call(version.GET, "GET", { token: admin, params: { id, version: "4" } });
    expect(v4.json).toMatchObject({ restored_from: 2, message: "Restore version 2", published_by: { kind: "api_key", name: "CI publisher" }, spec_yaml: MOVED });
    expect((await call(diff.GET, "GET", `/api/v1/custom-dashboards/${id}/versions/2/diff?to=4`, { token: admin, params: { id, version: "2" } })).json.changed).toBe(false);
    // Version 2 itself is untouched.
    const v2 = await call(version.GET, "GET", { token: admin, params: { id, version: "2" } });
    expect(v2.json).toMatchObject({ message: "Move the channel table right", restored_from: null, is_published: false });
  });

  it("a key without dashboards:publish may restore the draft but not publish it, and then nothing is written", async () => {
    const writer = await keyWith(["dashboards:read", "dashboards:write"], "CI writer");
    const before = await call(one.GET, "GET", { token: admin, params: { id } });
    const refused = await call(restore.POST, "POST", { token: writer, params: { id, version: "1" }, body: { publish: true } });
    expect(refused.status).toBe(403);
    expect(refused.json.detail).toMatch(/dashboards:publish/);
    const after = await call(one.GET, "GET", { token: admin, params: { id } });
    expect(after.json.draft_revision).toBe(before.json.draft_revision);
    expect(after.json.published_version).toBe(before.json.published_version);
    expect((await call(publish.POST, "POST", { token: writer, params: { id } })).status).toBe(403);
    expect((await call(restore.POST, "POST", { token: writer, params: { id, version: "1" } })).status).toBe(200);
    expect((await call(restore.POST, "POST", { token: admin, params: { id, version: "draft" } })).status).toBe(422);
  });

  it("is for editors, and another organization sees nothing of it", async () => {
    expect((await call(versions.GET, "GET", { token: analyst, params: { id } })).status).toBe(403);
    expect((await call(restore.POST, "POST", { token: analyst, params: { id, version: "1" } })).status).toBe(403);
    expect((await call(versions.GET, "GET", { token: globex, params: { id } })).status).toBe(404);
    expect((await call(versions.GET, "GET", { token: globex, params: { id: "history" } })).status).toBe(404);
    expect((await call(version.GET, "GET", { token: globex, params: { id, version: "1" } })).status).toBe(404);
    expect((await call(diff.GET, "GET", { token: globex, params: { id, version: "1" } })).status).toBe(404);
    expect((await call(restore.POST, "POST", { token: globex, params: { id, version: "1" } })).status).toBe(404);
    // A globex key cannot read acme's history either.
    const globexKey = await call(apiKeys.POST, "POST", { token: globex, body: { name: "globex ci", scopes: ["dashboards:read"] } });
    expect((await call(versions.GET, "GET", { token: globexKey.json.key, params: { id } })).status).toBe(404);
    // A location-scoped editor sees the organization's dashboards (they are not per location), so the history too.
    const scopedGm = await tokenFor("acme", "general_manager", { locationIds: ["loc_acme_nyc"] });
    expect((await call(versions.GET, "GET", { token: scopedGm, params: { id } })).json.total).toBeGreaterThanOrEqual(4);
    // Globex's own versions do not show acme's publishers' names.
    const { system } = await getDb();
    const rows = await system.query<{ org_id: string }>("SELECT DISTINCT org_id FROM dashboard_versions WHERE dashboard_id = $1", [id]);
    expect(rows).toEqual([{ org_id: "org_acme" }]);
  });
});
