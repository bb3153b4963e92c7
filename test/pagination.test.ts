import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { call, tokenFor } from "@/test/helpers";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { ENDPOINTS } from "@/lib/api/registry";
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from "@/lib/pagination";
import * as locations from "@/app/api/v1/locations/route";
import * as dashboards from "@/app/api/v1/custom-dashboards/route";
import * as embeds from "@/app/api/v1/custom-dashboards/[id]/embeds/route";
import * as documents from "@/app/api/v1/documents/route";
import * as rules from "@/app/api/v1/notifications/admin/custom-rules/route";
import * as groups from "@/app/api/v1/notifications/admin/group-subscriptions/route";
import * as unsubscribes from "@/app/api/v1/notifications/admin/unsubscribes/route";
import * as deadLetters from "@/app/api/v1/notifications/admin/dead-letters/route";
import * as demoOutbox from "@/app/api/v1/notifications/admin/demo-outbox/route";
import * as inbox from "@/app/api/v1/notifications/inbox/route";
import * as apiKeys from "@/app/api/v1/api-keys/route";
import * as versions from "@/app/api/v1/custom-dashboards/[id]/versions/route";
import * as reportSchedules from "@/app/api/v1/report-schedules/route";
import * as reportEmailGroups from "@/app/api/v1/report-email-groups/route";
import * as metrics from "@/app/api/v1/metrics/route";
import * as alerts from "@/app/api/v1/alerts/route";
import * as alertEvaluations from "@/app/api/v1/alerts/[id]/evaluations/route";
import * as members from "@/app/api/v1/members/route";
import * as invitations from "@/app/api/v1/members/invitations/route";
import { AlertDefinition } from "@/lib/manifest/alert";
import type { Prisma } from "@/lib/db/generated/client";

/*
 * Every list endpoint answers the one shape of lib/pagination.ts: `limit`/`offset` bounds are 422s,
 * pages follow one stable order, `total` counts every row the caller may see, and nothing of another
 * organization (or, for locations, outside the caller's scope) shows in `items` or `total`.
 */

type Org = "acme" | "globex";
const ORG_ID: Record<Org, string> = { acme: "org_acme", globex: "org_globex" };
const ROWS = 5;

/** Small fixed sets, answered whole (docs/conventions.md, "Lists"). */
const FIXED_SETS = [
  "GET /api/v1/notifications/admin/channel-configs",
  "GET /api/v1/notifications/admin/base-rules",
  // An organization's tables (at most QUARRY_DATA_MAX_TABLES), its configured pulls, a pull's latest 100 runs.
  "GET /api/v1/data/tables",
  "GET /api/v1/data/pulls",
  "GET /api/v1/data/pulls/{id}/runs",
];
/**
 * Lists paged by a cursor instead: the audit log only grows at its head while it is read, so an offset would
 * repeat or skip rows between pages; its cursor (the last row seen) cannot. lib/audit/audit.test.ts pages it.
 */
const CURSOR_PAGED = ["GET /api/v1/audit"];
/** Offset-paged like the rest, for callers who are no organization's admin: the install's organizations (lib/instance/instance.test.ts pages it). */
const PAGED_ELSEWHERE = ["/api/v1/instance/organizations"];

type Handler = Parameters<typeof call>[0];
interface List {
  name: string;
  handler: Handler;
  /** Path parameters per organization (embeds: that organization's dashboard). */
  params?: (org: Org) => Record<string, string>;
  /** Adds `n` rows for `org`. */
  seed?: (tx: TenantTx, org: Org, n: number) => Promise<unknown>;
}

const stamp = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i));
const id = (prefix: string, org: Org, i: number | string) => `${prefix}_page_${org}_${i}`;

async function ruleAndRun(tx: TenantTx, org: Org) {
  const ruleId = id("nrl", org, 0);
  if (await tx.notificationRule.findUnique({ where: { id: ruleId } })) return { ruleId, runId: id("nrn", org, 0) };
  await tx.notificationRule.create({
    data: { id: ruleId, orgId: ORG_ID[org], key: `paging.rule.${org}`, name: "Paging", baseRuleKey: "sales.gap_to_target", severity: "info", defaultChannels: ["in_app"], cadenceCron: "0 * * * *" },
  });
  await tx.notificationRuleRun.create({ data: { id: id("nrn", org, 0), orgId: ORG_ID[org], ruleId, scheduledFor: stamp(0), trigger: "manual", status: "fired" } });
  return { ruleId, runId: id("nrn", org, 0) };
}

/** A dashboard with `n` widget alerts of its admin (the alerts list), or the one alert whose evaluations are listed. */
async function alertOf(tx: TenantTx, org: Org, i: number | string) {
  const dashboardId = id("dsh", org, "alerts");
  if (!(await tx.dashboard.findUnique({ where: { id: dashboardId } }))) {
    await tx.dashboard.create({ data: { id: dashboardId, orgId: ORG_ID[org], name: "Alerted", slug: "paging-alerts", draftYaml: "kind: Dashboard", createdBy: `usr_${org}_admin`, updatedBy: `usr_${org}_admin` } });
  }
  const definition = AlertDefinition.parse({ condition: { kind: "below", threshold: 1 } }) as Prisma.InputJsonValue;
  await tx.widgetAlert.create({
    data: { id: id("wal", org, i), orgId: ORG_ID[org], dashboardId, name: `Paging ${i}`, widgetId: "orders_total", definition, cadenceKind: "cron", cron: "0 8 * * *", ownerId: `usr_${org}_admin`, sharedRole: "admin", createdAt: stamp(typeof i === "number" ? i % 2 : 0) }, // equal timestamps: the id breaks ties
  });
}

async function deliveries(tx: TenantTx, org: Org, n: number, prefix: string) {
  const { ruleId, runId } = await ruleAndRun(tx, org);
  for (let i = 0; i < n; i++) {
    await tx.notificationDelivery.create({
      data: {
        id: id(prefix, org, i), orgId: ORG_ID[org], runId, ruleId, channel: "in_app", recipient: `${prefix}-${i}`, status: "dead", reason: "failed", subject: "S", body: "B",
        severity: "info", dedupeKey: `${prefix}-${i}`, attempts: 6, maxAttempts: 6, createdAt: stamp(i), updatedAt: stamp(i % 2), // equal timestamps: the id breaks ties
      },
    });
  }
}

const LISTS: List[] = [
  { name: "locations", handler: locations.GET },
  {
    name: "members",
    handler: members.GET,
    seed: async (tx, org, n) => {
      for (let i = 0; i < n; i++) {
        const email = `paging${i}@${org}.test`;
        await tx.user.create({ data: { id: id("usr", org, i), orgId: ORG_ID[org], email, emailKey: email, name: `Paging ${i % 2}`, role: "analyst", locationIds: [], passwordHash: "-" } }); // equal names: the id breaks ties
      }
    },
  },
  {
    name: "invitations",
    handler: invitations.GET,
    seed: async (tx, org, n) => {
      for (let i = 0; i < n; i++) {
        const email = `invited${i}@${org}.test`;
        await tx.memberInvitation.create({
          data: { id: id("inv", org, i), orgId: ORG_ID[org], email, emailKey: email, role: "analyst", locationIds: [], tokenHash: new Uint8Array(Buffer.from(id("inv", org, i).padEnd(32, "-"))), expiresAt: new Date(Date.now() + 86_400_000), createdBy: `usr_${org}_admin`, createdAt: stamp(i % 2) }, // equal timestamps: the id breaks ties
        });
      }
    },
  },
  {
    name: "alerts",
    handler: alerts.GET,
    seed: async (tx, org, n) => {
      for (let i = 0; i < n; i++) await alertOf(tx, org, i);
    },
  },
  {
    name: "alert evaluations",
    handler: alertEvaluations.GET,
    params: (org) => ({ id: id("wal", org, "evaluated") }),
    seed: async (tx, org, n) => {
      await alertOf(tx, org, "evaluated");
      for (let i = 0; i < n; i++) {
        await tx.widgetAlertEvaluation.create({
          data: { id: id("wae", org, i), orgId: ORG_ID[org], alertId: id("wal", org, "evaluated"), trigger: "cron", evaluatedAt: stamp(i % 2), scopeKey: "admin:*", value: i, threshold: 1, outcome: i < 1 ? "met" : "not_met", met: i < 1, state: i < 1 ? "firing" : "ok" }, // equal timestamps: the id breaks ties
        });
      }
    },
  },
  {
    name: "api keys",
    handler: apiKeys.GET,
    seed: async (tx, org, n) => {
      for (let i = 0; i < n; i++) {
        await tx.apiKey.create({ data: { id: id("apk", org, i), orgId: ORG_ID[org], name: `Paging ${i}`, secretHash: new Uint8Array(32), scopes: ["dashboards:read"], createdBy: `usr_${org}_admin`, createdAt: stamp(i % 2) } }); // equal timestamps: the id breaks ties
      }
    },
  },
  {
    name: "dashboards",
    handler: dashboards.GET,
    seed: async (tx, org, n) => {
      for (let i = 0; i < n; i++) {
        await tx.dashboard.create({ data: { id: id("dsh", org, i), orgId: ORG_ID[org], name: `Paging ${i}`, slug: `paging-${i}`, draftYaml: "kind: Dashboard", createdBy: `usr_${org}_admin`, updatedBy: `usr_${org}_admin`, updatedAt: stamp(i % 2) } });
      }
    },
  },
  {
    name: "embeds",
    handler: embeds.GET,
    params: (org) => ({ id: id("dsh", org, "embeds") }),
    seed: async (tx, org, n) => {
      const dashboardId = id("dsh", org, "embeds");
      await tx.dashboard.create({ data: { id: dashboardId, orgId: ORG_ID[org], name: "Embedded", slug: "paging-embeds", draftYaml: "kind: Dashboard", publishedVersion: 1, createdBy: `usr_${org}_admin`, updatedBy: `usr_${org}_admin` } });
      for (let i = 0; i < n; i++) {
        await tx.dashboardEmbed.create({ data: { id: id("emb", org, i), orgId: ORG_ID[org], dashboardId, version: 1, allowedOrigins: [], expiresAt: new Date(Date.now() + 3_600_000), createdBy: `usr_${org}_admin`, createdAt: stamp(i % 2) } });
      }
    },
  },
  {
    name: "dashboard versions",
    handler: versions.GET,
    params: (org) => ({ id: id("dsh", org, "versions") }),
    seed: async (tx, org, n) => {
      const dashboardId = id("dsh", org, "versions");
      await tx.dashboard.create({ data: { id: dashboardId, orgId: ORG_ID[org], name: "Versioned", slug: "paging-versions", draftYaml: "kind: Dashboard", publishedVersion: Math.max(n, 1), createdBy: `usr_${org}_admin`, updatedBy: `usr_${org}_admin` } });
      for (let i = 0; i < n; i++) {
        await tx.dashboardVersion.create({ data: { orgId: ORG_ID[org], dashboardId, version: i + 1, name: `Paging ${i}`, specYaml: "kind: Dashboard", publishedBy: `usr_${org}_admin` } });
      }
    },
  },
  {
    name: "documents",
    handler: documents.GET,
    seed: async (tx, org, n) => {
      for (let i = 0; i < n; i++) {
        await tx.document.create({ data: { id: id("doc", org, i), orgId: ORG_ID[org], title: `Paging ${i}`, filename: `p${i}.txt`, contentType: "text/plain", extension: "txt", createdBy: `usr_${org}_admin`, createdAt: stamp(i % 2) } });
      }
    },
  },
  {
    name: "custom rules",
    handler: rules.GET,
    seed: async (tx, org, n) => {
      for (let i = 0; i < n; i++) {
        await tx.notificationRule.create({ data: { id: id("nrl", org, i + 1), orgId: ORG_ID[org], key: `paging.rule${i}.x`, name: "Paging", baseRuleKey: "sales.gap_to_target", severity: "info", defaultChannels: ["in_app"], cadenceCron: "0 * * * *" } });
      }
    },
  },
  {
    name: "group subscriptions",
    handler: groups.GET,
    seed: async (tx, org, n) => {
      const { ruleId } = await ruleAndRun(tx, org);
      for (let i = 0; i < n; i++) {
        await tx.notificationGroupSubscription.create({ data: { id: id("ngs", org, i), orgId: ORG_ID[org], ruleId, groupName: `group ${i}`, members: ["a@example.com"], createdAt: stamp(i % 2) } });
      }
    },
  },
  // The same email groups, as report schedules pick them (rows seeded by "group subscriptions" above).
  { name: "report email groups", handler: reportEmailGroups.GET },
  {
    name: "unsubscribes",
    handler: unsubscribes.GET,
    seed: async (tx, org, n) => {
      for (let i = 0; i < n; i++) await tx.notificationUnsubscribe.create({ data: { id: id("nun", org, i), orgId: ORG_ID[org], address: `gone${i}@example.com`, createdAt: stamp(i % 2) } });
    },
  },
  { name: "dead letters", handler: deadLetters.GET, seed: (tx, org, n) => deliveries(tx, org, n, "ndl") },
  {
    name: "demo outbox",
    handler: demoOutbox.GET,
    seed: async (tx, org, n) => {
      const { ruleId, runId } = await ruleAndRun(tx, org);
      for (let i = 0; i < n; i++) {
        await tx.notificationDelivery.create({
          data: {
            id: id("ndo", org, i), orgId: ORG_ID[org], runId, ruleId, channel: "email", recipient: `ndo-${i}@${org}.test`, status: "delivered", reason: "kept in the demo outbox on attempt 1 (the demo's e-mail: nothing was sent)",
            subject: "S", body: "B", severity: "info", dedupeKey: `ndo-${i}`, attempts: 1, maxAttempts: 6, createdAt: stamp(i), updatedAt: stamp(i), deliveredAt: stamp(i % 2), // equal timestamps: the id breaks ties
          },
        });
      }
    },
  },
  {
    name: "report schedules",
    handler: reportSchedules.GET,
    seed: async (tx, org, n) => {
      const dashboardId = id("dsh", org, "reports");
      await tx.dashboard.create({ data: { id: dashboardId, orgId: ORG_ID[org], name: "Reported", slug: "paging-reports", draftYaml: "kind: Dashboard", createdBy: `usr_${org}_admin`, updatedBy: `usr_${org}_admin` } });
      for (let i = 0; i < n; i++) {
        await tx.reportSchedule.create({
          data: { id: id("rsc", org, i), orgId: ORG_ID[org], dashboardId, name: `Paging ${i}`, cron: "0 8 * * 1", timeZone: "UTC", formats: ["pdf"], channels: ["email"], sharedRole: "admin", createdBy: `usr_${org}_admin`, updatedBy: `usr_${org}_admin`, createdAt: stamp(i % 2) }, // equal timestamps: the id breaks ties
        });
      }
    },
  },
  {
    name: "metrics",
    handler: metrics.GET,
    seed: async (tx, org, n) => {
      for (let i = 0; i < n; i++) {
        const datasetId = id("ds", org, i);
        const specYaml = `version: "1.0"\nkind: dataset\nmetadata: { id: ${datasetId}, name: Paging ${i} }\nspec:\n  metrics: [{ id: ${id("m", org, i)}, type: sql, expression: "count(*)" }]\n`;
        await tx.sharedDataset.create({ data: { id: id("sds", org, i), orgId: ORG_ID[org], datasetId, name: `Paging ${i}`, specYaml, version: 1, updatedBy: `usr_${org}_admin` } });
      }
    },
  },
  {
    name: "inbox",
    handler: inbox.GET,
    seed: async (tx, org, n) => {
      await deliveries(tx, org, n, "ndi");
      for (let i = 0; i < n; i++) {
        await tx.notificationInboxItem.create({ data: { id: id("nib", org, i), orgId: ORG_ID[org], userId: `usr_${org}_admin`, deliveryId: id("ndi", org, i), title: "T", body: "B", severity: "info", createdAt: stamp(i % 2) } });
      }
    },
  },
];

const tokens = {} as Record<Org, string>;

beforeAll(async () => {
  [tokens.acme, tokens.globex] = await Promise.all([tokenFor("acme"), tokenFor("globex")]);
  for (const org of ["acme", "globex"] as const) {
    await withTenant({ orgId: ORG_ID[org] }, async (tx) => {
      for (const list of LISTS) await list.seed?.(tx, org, org === "acme" ? ROWS : 2);
    });
  }
});

const get = (list: List, org: Org, query: string) => call(list.handler, "GET", `${list.handler.endpoint!.path.replace("{id}", list.params?.(org).id ?? "")}${query}`, { token: tokens[org], params: list.params?.(org) });
// Versions have no id of their own: their publisher (a user of the organization) and number tell them apart.
const ids = (items: Record<string, unknown>[]) => items.map((item) => String(item.id ?? item.embed_id ?? `${(item.published_by as { id: string }).id}:v${item.version}`));

describe("one pagination shape for every list", () => {
  it("every GET answering `items` is paged, except the declared fixed sets", () => {
    const shapeOf = (schema: unknown) => (schema instanceof z.ZodObject ? Object.keys(schema.shape) : []);
    const lists = ENDPOINTS.filter((e) => e.method === "get" && shapeOf(e.response).includes("items"));
    const cursorPaged = lists.filter((e) => CURSOR_PAGED.includes(`GET ${e.path}`));
    expect(cursorPaged.length).toBe(CURSOR_PAGED.length);
    for (const endpoint of cursorPaged) {
      expect(endpoint.query?.parse({}), endpoint.path).toMatchObject({ limit: PAGE_LIMIT_DEFAULT });
      expect(shapeOf(endpoint.response), endpoint.path).toEqual(expect.arrayContaining(["items", "next_cursor"]));
    }
    const paged = lists.filter((e) => !FIXED_SETS.includes(`GET ${e.path}`) && !CURSOR_PAGED.includes(`GET ${e.path}`));
    expect(lists.length - paged.length).toBe(FIXED_SETS.length + CURSOR_PAGED.length);
    for (const endpoint of paged) {
      expect(endpoint.query?.parse({}), endpoint.path).toMatchObject({ limit: PAGE_LIMIT_DEFAULT, offset: 0 });
      expect(shapeOf(endpoint.response), endpoint.path).toEqual(expect.arrayContaining(["items", "total", "limit", "offset"]));
    }
    expect(paged.map((e) => e.path).sort()).toEqual([...LISTS.map((l) => l.handler.endpoint!.path), ...PAGED_ELSEWHERE].sort());
  });

  describe.each(LISTS)("$name", (list) => {
    it.each(["limit=0", `limit=${PAGE_LIMIT_MAX + 1}`, "limit=-3", "offset=-1", "limit=ten", "offset=x", "limit=2.5"])("refuses %s with a 422 detail list", async (query) => {
      const res = await get(list, "acme", `?${query}`);
      expect(res.status).toBe(422);
      expect(Array.isArray(res.json.detail)).toBe(true);
      expect(res.json.detail[0]).toMatchObject({ loc: ["query", query.split("=")[0]] });
    });

    it("pages through every row in one stable order, with the total of them all", async () => {
      const all = await get(list, "acme", `?limit=${PAGE_LIMIT_MAX}`);
      expect(all.status).toBe(200);
      expect(all.json).toMatchObject({ limit: PAGE_LIMIT_MAX, offset: 0, total: all.json.items.length });
      expect(all.json.total).toBeGreaterThanOrEqual(ROWS);
      const pages: string[] = [];
      for (let offset = 0; offset < all.json.total; offset += 2) {
        const page = await get(list, "acme", `?limit=2&offset=${offset}`);
        expect(page.json).toMatchObject({ total: all.json.total, limit: 2, offset });
        expect(page.json.items.length).toBe(Math.min(2, all.json.total - offset));
        pages.push(...ids(page.json.items));
      }
      expect(pages).toEqual(ids(all.json.items));
      expect((await get(list, "acme", `?offset=${all.json.total}`)).json).toMatchObject({ items: [], total: all.json.total });
      expect((await get(list, "acme", "")).json).toMatchObject({ limit: PAGE_LIMIT_DEFAULT, offset: 0 });
    });

    it("shows another organization nothing of acme's, in items or total", async () => {
      const acme = await get(list, "acme", `?limit=${PAGE_LIMIT_MAX}`);
      const globex = await get(list, "globex", `?limit=${PAGE_LIMIT_MAX}`);
      expect(globex.status).toBe(200);
      expect(globex.json.total).toBe(globex.json.items.length);
      expect(ids(globex.json.items).filter((x) => ids(acme.json.items).includes(x))).toEqual([]);
      expect(ids(globex.json.items).every((x) => !x.includes("_acme_"))).toBe(true);
      expect(ids(acme.json.items).every((x) => !x.includes("_globex_"))).toBe(true);
    });
  });

  it("counts and lists only the locations in a scoped caller's scope", async () => {
    const scope = ["loc_acme_nyc", "loc_acme_bos"];
    const token = await tokenFor("acme", "general_manager", { locationIds: scope });
    const first = await call(locations.GET, "GET", "/api/v1/locations?limit=1", { token });
    const second = await call(locations.GET, "GET", "/api/v1/locations?limit=1&offset=1", { token });
    expect(first.json.total).toBe(2);
    expect([...first.json.items, ...second.json.items].map((l: { id: string }) => l.id).sort()).toEqual([...scope].sort());
  });
});
