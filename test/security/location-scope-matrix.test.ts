import { beforeAll, describe, expect, it } from "vitest";
import { ENDPOINTS } from "@/lib/api/registry";
import { Role } from "@/lib/access/roles";
import { forgetDashboardResults } from "@/lib/dashboards/result-cache";
import { getDb } from "@/lib/db/client";
import { call, sessionCookieFor, tokenFor } from "@/test/helpers";
import { endpointKey, handlerOf } from "./registry-handlers";

/*
 * The location-scope dimension of the route matrix (route-matrix.test.ts holds route × role ×
 * organization). Callers of acme scoped to two of its five locations, in every role and by bearer
 * token and session cookie, call every endpoint that answers with location-bearing data; so do the
 * embeds and public dashboards such callers made. Two checks per answer:
 *   - no id or name of a location outside the scope appears in it;
 *   - it does not change when the data of the locations outside the scope changes (their orders,
 *     targets and names are rewritten between two rounds of calls), so even a total (a KPI) that
 *     summed another location's orders would be caught. The same change does move an unscoped
 *     admin's answers: the check can fail.
 * Every endpoint of the registry is either exercised here or listed with the reason location does
 * not apply, so a new endpoint cannot slip through.
 */

const SCOPE = ["loc_acme_nyc", "loc_acme_bos"];
const OUTSIDE = ["loc_acme_chi", "loc_acme_aus", "loc_acme_sfo"];
/** A location added to acme between the two rounds: outside the scope too. */
const NEW_LOCATION = "loc_acme_new";
const ORIGIN = "http://localhost:3000";

const NOT_LOCATION_BEARING: Record<string, string> = {
  "GET /api/health": "liveness only, no tenant data",
  "GET /api/ready": "readiness only, no tenant data",
  "GET /openapi.json": "the API description, no tenant data",
  "POST /api/v1/custom-dashboards": "stores a manifest; answers the stored record, no warehouse rows",
  "GET /api/v1/custom-dashboards": "dashboard names and versions, no warehouse rows",
  "POST /api/v1/custom-dashboards/_seed": "writes the sample dashboard; answers a count",
  "GET /api/v1/custom-dashboards/{id}": "the manifest as its editors wrote it, no warehouse rows (data comes from …/query)",
  "PUT /api/v1/custom-dashboards/{id}": "stores a manifest, no warehouse rows",
  "DELETE /api/v1/custom-dashboards/{id}": "answers 204",
  "POST /api/v1/custom-dashboards/{id}/publish": "answers the version record, no warehouse rows",
  "POST /api/v1/custom-dashboards/{id}/embed": "answers the grant (token, url); the data it opens is checked through POST /api/v1/embed/query",
  "GET /api/v1/custom-dashboards/{id}/export":
    "a PDF or PNG of …/query's answer for the same caller (lib/reports/render.ts queries through it); lib/reports/export.test.ts reads its text with pdftotext and finds a two-location manager's figures equal to …/query's and no other location's name",
  "GET /api/v1/embed/export":
    "a PDF or PNG of POST /api/v1/embed/query's answer for the same token (lib/reports/render.ts queries through it); lib/reports/anonymous-export.test.ts finds a one-location embed's figures equal to its query's and no other location's name",
  "GET /api/v1/public/export": "a PDF or PNG of POST /api/v1/public/query's answer (lib/reports/render.ts queries through it), under the publisher's scope as that query",
  "GET /api/v1/custom-dashboards/{id}/embeds": "grant metadata (locked filter values as configured, origins, expiry), no warehouse rows",
  "DELETE /api/v1/custom-dashboards/{id}/embeds/{embed_id}": "answers 204",
  "GET /api/v1/custom-dashboards/{id}/rollups": "the draft's rollup names, build states and the ids and titles of the widgets each answers, no warehouse rows",
  "GET /api/v1/custom-dashboards/{id}/versions": "version metadata (number, publisher, message, source), no warehouse rows",
  "GET /api/v1/custom-dashboards/{id}/versions/{version}": "a stored manifest, no warehouse rows",
  "GET /api/v1/custom-dashboards/{id}/versions/{version}/diff": "the difference of two stored manifests, no warehouse rows",
  "POST /api/v1/custom-dashboards/{id}/versions/{version}/restore": "copies a stored manifest into the draft; answers the record, no warehouse rows",
  "POST /api/v1/custom-dashboards/_plan":
    "manifests compared with the stored ones; its SQL is only EXPLAINed (under the caller's scope); a shared dataset's impact values run through the query engine in the caller's scope (principalScope, lib/dashboards/dataset-plan.ts)",
  "GET /api/v1/metrics": "metric definitions, owners, certifications and the dashboards that read them (configuration), no warehouse rows",
  "GET /api/v1/metrics/{dataset}/{metric}/series": "the metric run through the query engine (runWidgetQuery) in the caller's scope (principalScope, lib/dashboards/metrics-catalog.ts), as a dashboard widget's query is",
  "PUT /api/v1/metrics/{dataset}/{metric}/certification": "admins only; answers the catalog entry, no warehouse rows",
  "DELETE /api/v1/metrics/{dataset}/{metric}/certification": "admins only; answers the catalog entry, no warehouse rows",
  "POST /api/v1/custom-dashboards/_apply": "stores manifests; answers revisions and version numbers, no warehouse rows",
  "GET /api/v1/notifications/admin/channel-configs": "admin configuration of delivery channels, no location data",
  "PUT /api/v1/notifications/admin/channel-configs/{kind}": "admin configuration of delivery channels",
  "POST /api/v1/notifications/admin/channel-configs/{kind}/test": "sends a fixed test message",
  "GET /api/v1/notifications/admin/base-rules": "the static rule catalog",
  "POST /api/v1/notifications/admin/custom-rules": "rule configuration (thresholds, channels)",
  "GET /api/v1/notifications/admin/custom-rules": "rule configuration and run counts",
  "GET /api/v1/notifications/admin/custom-rules/{id}": "rule configuration and subscriptions",
  "PATCH /api/v1/notifications/admin/custom-rules/{id}": "rule configuration",
  "POST /api/v1/notifications/admin/custom-rules/{id}/trigger":
    "queues an organization-wide evaluation (rules are an admin feature over every location; findings go to admins' inboxes and the groups the admin chose, docs/security.md)",
  "POST /api/v1/notifications/admin/group-subscriptions": "subscription configuration",
  "GET /api/v1/notifications/admin/group-subscriptions": "subscription configuration",
  "DELETE /api/v1/notifications/admin/group-subscriptions/{id}": "answers 204",
  "POST /api/v1/notifications/admin/unsubscribes": "opt-out configuration",
  "GET /api/v1/notifications/admin/unsubscribes": "opt-out configuration",
  "DELETE /api/v1/notifications/admin/unsubscribes/{id}": "answers 204",
  "GET /api/v1/notifications/admin/quiet-hours": "quiet-hours configuration",
  "PUT /api/v1/notifications/admin/quiet-hours": "quiet-hours configuration",
  "GET /api/v1/organization/settings": "organization settings (image origins)",
  "PUT /api/v1/organization/settings": "organization settings (image origins)",
  "GET /api/v1/notifications/admin/dead-letters": "failed deliveries of organization-wide rules (admin feature, as trigger)",
  "GET /api/v1/notifications/admin/demo-outbox": "the demo's e-mail of organization-wide rules (admin feature, as dead letters)",
  "GET /api/v1/notifications/admin/demo-outbox/{id}/attachments/{file_id}":
    "a report file the outbox kept: admins of every location only, 404 for a scoped admin and for another delivery's file (lib/reports/schedules-run.test.ts)",
  "POST /api/v1/notifications/admin/dead-letters/{id}/requeue": "re-sends a delivery",
  "GET /api/v1/notification-channels/delivery-health": "delivery counts per channel",
  "GET /api/v1/notifications/inbox":
    "the caller's own notifications; in-app deliveries go to admins only (lib/notifications/pipeline.ts), findings of organization-wide rules",
  "POST /api/v1/notifications/inbox/{id}/read": "marks the caller's own notification read",
  "DELETE /api/v1/me/sessions": "ends the caller's own sessions; answers 204",
  "GET /api/v1/api-keys": "key metadata (admins only): names, scopes and the locations each key was given, as configured; no warehouse rows",
  "POST /api/v1/api-keys": "answers the new key; its locations must be ones the creating admin sees (lib/auth/api-keys.test.ts)",
  "DELETE /api/v1/api-keys/{id}": "answers 204",
  "DELETE /api/v1/users/{id}/sessions": "ends a user's sessions (admin); answers 204",
  "GET /api/v1/instance/organizations": "the install's organizations and member counts, no warehouse rows; instance admins only, everyone else 403 (lib/instance/instance.test.ts)",
  "POST /api/v1/instance/organizations": "makes an organization and answers its first admin's link; instance admins only",
  "GET /api/v1/members": "members and the location ids they were granted (configuration, no warehouse rows); admins of every location only, a scoped caller gets 403 (lib/members/members.test.ts)",
  "PATCH /api/v1/members/{id}": "admins of every location only (403 for scoped callers); granted locations must be the organization's",
  "DELETE /api/v1/members/{id}": "admins of every location only; answers 204",
  "POST /api/v1/members/{id}/password-reset": "admins of every location only; answers a link",
  "GET /api/v1/members/invitations": "invitation configuration; admins of every location only",
  "POST /api/v1/members/invitations": "admins of every location only; granted locations must be the organization's (lib/members/members.test.ts)",
  "DELETE /api/v1/members/invitations/{id}": "admins of every location only; answers 204",
  "GET /api/v1/audit": "the audit log: who changed what (configuration, no warehouse rows); admins of every location only, a scoped caller gets 403 (lib/audit/audit.test.ts)",
  "GET /api/v1/audit.csv": "the audit log as CSV; admins of every location only, as GET /api/v1/audit",
  "POST /api/v1/invitations/accept": "public: creates the invited account; no location data in the answer",
  "POST /api/v1/password-resets": "public: the same answer for every address",
  "POST /api/v1/password-resets/complete": "public: answers 204",
  "GET /api/v1/setup": "public: whether the install has no organization",
  "POST /api/v1/setup": "public, once per install: the first organization",
  "GET /api/v1/sso": "SSO configuration; admins of every location only",
  "PUT /api/v1/sso": "admins of every location only; mapped locations must be the organization's (lib/sso/sso.test.ts)",
  "DELETE /api/v1/sso": "admins of every location only; answers 204",
  "POST /api/v1/sso/discover": "public: a provider id by e-mail domain or slug, no location data",
  "POST /api/v1/locations": "admins of every location only (403 for scoped callers): a new location is outside every scope (lib/members/members.test.ts)",
  "PATCH /api/v1/locations/{id}": "admins of every location only (403 for scoped callers)",
  "GET /api/v1/documents/upload-constraints": "static limits",
  "GET /api/v1/documents": "documents belong to the organization, not to a location (no location column)",
  "POST /api/v1/documents": "documents carry no location",
  "GET /api/v1/documents/{id}": "documents carry no location",
  "POST /api/v1/documents/{id}/upload": "documents carry no location",
  "POST /api/v1/data/tables/{name}/rows": "writes rows, answers counts: a scoped caller's rows outside its locations are refused by the table's location policy, nothing loaded (app/api/v1/data/tables/[name]/rows/route.test.ts)",
  "GET /api/v1/data/tables": "table metadata (columns, types, whole-table row count and size, readers), no rows; a table's rows are read through dashboards under its location policy (lib/data/load.test.ts)",
  "GET /api/v1/data/tables/{name}": "table metadata, as GET /api/v1/data/tables",
  "POST /api/v1/data/tables": "loads an upload under the caller's scope: rows outside a scoped caller's locations are refused by the table's location policy, nothing loaded",
  "DELETE /api/v1/data/tables/{name}": "admins only; answers 204 or the list of readers (409)",
  "POST /api/v1/data/uploads": "stores a file and answers its preview to the admin who sent it; no warehouse rows",
  "GET /api/v1/data/uploads/{id}": "the uploader's own file preview; no warehouse rows",
  "GET /api/v1/alerts": "alert configuration; each alert's states only for scopes within the caller's locations (lib/alerts/alerts.ts scopeVisible)",
  "POST /api/v1/alerts": "the alert's scope is the creator's own locations (sharedLocationIds); recipients are evaluated in their own scopes (lib/alerts/evaluate.test.ts)",
  "GET /api/v1/alerts/{id}": "as GET /api/v1/alerts: states of scopes within the caller's locations only",
  "PATCH /api/v1/alerts/{id}": "editors change only alerts whose scope is within their locations",
  "DELETE /api/v1/alerts/{id}": "as PATCH; answers 204",
  "GET /api/v1/alerts/{id}/evaluations": "evaluations of scopes within the caller's locations only",
  "POST /api/v1/alerts/{id}/mute": "alert configuration, as PATCH",
  "POST /api/v1/alerts/{id}/snooze": "alert configuration, as PATCH",
  "POST /api/v1/alerts/{id}/test": "answers the evaluations of scopes within the caller's locations only",
  "GET /api/v1/alert-pictures/{token}": "a signed link drawing one widget in the recipient scope it was signed for (lib/alerts/links.ts)",
  "GET /api/v1/data/pulls": "pull configuration; admins of every location only, a scoped caller gets 403",
  "POST /api/v1/data/pulls": "admins of every location only",
  "GET /api/v1/data/pulls/{id}": "admins of every location only",
  "PATCH /api/v1/data/pulls/{id}": "admins of every location only",
  "DELETE /api/v1/data/pulls/{id}": "admins of every location only; answers 204",
  "GET /api/v1/data/pulls/{id}/runs": "run history (counts, cursor values, errors); admins of every location only",
  "POST /api/v1/data/pulls/{id}/runs": "admins of every location only; answers the queued run",
  "GET /api/v1/documents/{id}/download": "documents carry no location",
  "GET /api/v1/documents/signed-file": "documents carry no location",
  "DELETE /api/v1/documents/{id}": "documents carry no location",
  "GET /api/v1/documents/{id}/index": "documents carry no location",
  "POST /api/v1/documents/{id}/index": "documents carry no location",
  "DELETE /api/v1/documents/{id}/index": "documents carry no location",
  "POST /api/v1/documents/search": "searches document chunks, which carry no location",
  "GET /api/v1/documents/embedding-config": "provider configuration",
  "POST /api/v1/chat": "answers from document chunks, which carry no location",
  "GET /api/v1/report-email-groups": "email group names and member counts (configuration), no location data",
  "GET /api/v1/report-schedules": "schedule configuration; a scoped editor lists only schedules within their scope (lib/reports/schedules.test.ts); report data is rendered per recipient scope (schedules-run.test.ts)",
  "POST /api/v1/report-schedules": "schedule configuration; a shared scope wider than the caller's is refused (lib/reports/schedules.test.ts)",
  "GET /api/v1/report-schedules/{id}": "schedule configuration, 404 beyond the caller's scope",
  "PATCH /api/v1/report-schedules/{id}": "schedule configuration, 404 beyond the caller's scope",
  "DELETE /api/v1/report-schedules/{id}": "answers 204",
  "POST /api/v1/report-schedules/{id}/send": "queues a run; each recipient's file is rendered in that recipient's scope (lib/reports/schedules-run.test.ts)",
  "GET /api/v1/report-files/{token}": "a signed link to one file rendered in one scope; the token names the file and its scope (lib/reports/schedules-run.test.ts)",
  "POST /api/v1/report-unsubscribe/{token}": "records an unsubscribe; answers the schedule's name",
};

/** How a caller authenticates: a bearer token or a next-auth session cookie (with this site's Origin, as the CSRF check wants). */
interface Caller {
  label: string;
  headers: Record<string, string>;
  token?: string;
}

/** One call whose answer is checked: which endpoint, and how to make it. */
interface Observation {
  endpoint: string;
  label: string;
  /** A base observation must show some in-scope data (else the check would pass on an empty answer). */
  showsScope: boolean;
  run: () => Promise<{ status: number; text: string; json: unknown }>;
}

const state = {
  dashboard: "",
  embeds: [] as { creator: string; token: string }[],
  publics: [] as { creator: string; slug: string }[],
  outsideNames: [] as string[],
};

function manifest(slug: string): string {
  const widget = (id: string, component: string, data: string) => `---
version: "1.0"
kind: widget
metadata: { id: ${id}, name: ${id} }
spec:
  component: ${component}
  layout: { x: 0, y: 0, w: 6, h: 3 }
${data}`;
  return `version: "1.0"
kind: dashboard
metadata: { id: ${slug}, name: ${slug} }
platform: { scope: org, roles: [admin, general_manager, analyst], allow_embed: true, public: true }
spec:
  datasets:
    - id: sales
      from: orders
      dimensions:
        - { id: location_id, column: orders.location_id }
        - { id: channel, column: orders.channel }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
        - { id: orders_count, type: sql, expression: count(*) }
    - id: by_city
      query: "SELECT l.city, o.location_id, o.amount FROM orders o JOIN locations l ON l.id = o.location_id"
      dimensions:
        - { id: city, column: by_city.city }
        - { id: location_id, column: by_city.location_id }
      metrics:
        - { id: revenue, type: sql, expression: sum(by_city.amount) }
  tabs:
    - { id: main, name: Main, widgets: [location, total, by_location, by_channel, city_revenue, sql_locations, sql_targets] }
${widget("location", "filter", `  display:
    filter: { control: select, options: [${[...SCOPE, ...OUTSIDE].join(", ")}] }
  bindings:
    - { target: "*", field: location_id, operator: eq }`)}
${widget("total", "kpi", `  data: { kind: dataset, dataset: sales, columns: [revenue], mappings: { value: revenue } }`)}
${widget("by_location", "table", `  data: { kind: dataset, dataset: sales, columns: [location_id, revenue, orders_count] }`)}
${widget("by_channel", "table", `  data: { kind: dataset, dataset: sales, columns: [channel, revenue, orders_count] }`)}
${widget("city_revenue", "table", `  data: { kind: dataset, dataset: by_city, columns: [city, revenue] }`)}
${widget("sql_locations", "table", `  data:
    kind: sql
    query: "SELECT l.id AS location_id, l.name, l.city, sum(o.amount) AS revenue, count(*) AS orders FROM orders o JOIN locations l ON l.id = o.location_id GROUP BY 1, 2, 3 ORDER BY 1"`)}
${widget("sql_targets", "table", `  data:
    kind: sql
    query: "SELECT t.location_id, sum(t.target_amount) AS target, (SELECT count(*) FROM locations) AS locations_seen FROM sales_targets t GROUP BY 1 ORDER BY 1"`)}
`;
}

async function handler(key: string) {
  const endpoint = ENDPOINTS.find((e) => endpointKey(e) === key);
  if (!endpoint) throw new Error(`${key} is not in the registry`);
  return handlerOf(endpoint);
}

/** A dashboard made and published through the API by `caller`. */
async function makePublished(caller: Caller, slug: string): Promise<string> {
  const create = await call(await handler("POST /api/v1/custom-dashboards"), "POST", "/api/v1/custom-dashboards", {
    token: caller.token,
    headers: caller.headers,
    body: { name: slug, slug, spec_yaml: manifest(slug) },
  });
  expect(create.status, create.text).toBe(201);
  const id = create.json.id as string;
  const publish = await call(await handler("POST /api/v1/custom-dashboards/{id}/publish"), "POST", `/api/v1/custom-dashboards/${id}/publish`, {
    token: caller.token,
    headers: caller.headers,
    params: { id },
  });
  expect(publish.status, publish.text).toBeLessThan(300);
  return id;
}

const bearer = (role: Role, locationIds?: string[]) => async (): Promise<Caller> => ({
  label: `acme ${role} (bearer${locationIds ? `, ${locationIds.length} locations` : ", every location"})`,
  headers: {},
  token: await tokenFor("acme", role, locationIds ? { locationIds } : {}),
});
const session = (role: Role, locationIds: string[]) => async (): Promise<Caller> => ({
  label: `acme ${role} (session, ${locationIds.length} locations)`,
  headers: { cookie: await sessionCookieFor("acme", role, locationIds), origin: ORIGIN },
});

/** An organization API key (dashboards:read) given the locations, made by acme's unscoped admin. */
const apiKey = (locationIds: string[]) => async (): Promise<Caller> => {
  const made = await call(await handler("POST /api/v1/api-keys"), "POST", "/api/v1/api-keys", {
    token: await tokenFor("acme", "admin"),
    body: { name: "scope matrix", scopes: ["dashboards:read"], location_ids: locationIds },
  });
  expect(made.status, made.text).toBe(201);
  return { label: `acme API key (dashboards:read, ${locationIds.length} locations)`, headers: {}, token: made.json.key };
};

/** Every scoped caller: each role by bearer token, and by session cookie, and an API key. */
const SCOPED_CALLERS = [...Role.options.map((role) => bearer(role, SCOPE)), ...Role.options.map((role) => session(role, SCOPE)), apiKey(SCOPE)];

/** The observations of the location-bearing endpoints, made once the fixtures exist. */
async function observations(): Promise<Observation[]> {
  const list: Observation[] = [];
  for (const make of SCOPED_CALLERS) {
    const caller = await make();
    list.push({
      endpoint: "GET /api/v1/locations",
      label: caller.label,
      showsScope: true,
      run: async () => call(await handler("GET /api/v1/locations"), "GET", "/api/v1/locations", { token: caller.token, headers: caller.headers }),
    });
    for (const filters of [{}, { location: "loc_acme_sfo" }]) {
      list.push({
        endpoint: "POST /api/v1/custom-dashboards/{id}/query",
        label: `${caller.label}, filters ${JSON.stringify(filters)}`,
        showsScope: Object.keys(filters).length === 0,
        run: async () => {
          forgetDashboardResults("org_acme", state.dashboard);
          return call(await handler("POST /api/v1/custom-dashboards/{id}/query"), "POST", `/api/v1/custom-dashboards/${state.dashboard}/query`, {
            token: caller.token,
            headers: caller.headers,
            params: { id: state.dashboard },
            body: { filters },
          });
        },
      });
    }
  }
  for (const embed of state.embeds) {
    for (const filters of [{}, { location: "loc_acme_sfo" }]) {
      list.push({
        endpoint: "POST /api/v1/embed/query",
        label: `embed made by ${embed.creator}, filters ${JSON.stringify(filters)}`,
        showsScope: Object.keys(filters).length === 0,
        run: async () => {
          forgetDashboardResults("org_acme", state.dashboard);
          return call(await handler("POST /api/v1/embed/query"), "POST", "/api/v1/embed/query", { body: { token: embed.token, filters } });
        },
      });
    }
  }
  for (const shared of state.publics) {
    for (const filters of [{}, { location: "loc_acme_sfo" }]) {
      list.push({
        endpoint: "POST /api/v1/public/query",
        label: `public dashboard published by ${shared.creator}, filters ${JSON.stringify(filters)}`,
        showsScope: Object.keys(filters).length === 0,
        run: async () => {
          const { system } = await getDb();
          for (const { id } of await system.query<{ id: string }>("SELECT id FROM dashboards WHERE org_id = 'org_acme'")) forgetDashboardResults("org_acme", id);
          return call(await handler("POST /api/v1/public/query"), "POST", "/api/v1/public/query", { body: { org: "acme", slug: shared.slug, filters } });
        },
      });
    }
  }
  return list;
}

/** An answer without what changes from call to call (the cache flag). */
function comparable(json: unknown): unknown {
  return JSON.parse(JSON.stringify(json, (key, value: unknown) => (key === "cached" ? undefined : value)));
}

/** Rewrites everything of the locations outside the scope (their orders' amounts, one new order each on a new channel, their targets and names) and adds a location. */
async function changeOutsideLocations(): Promise<void> {
  const { system } = await getDb();
  const outside = `(${OUTSIDE.map((id) => `'${id}'`).join(", ")})`;
  await system.exec(`UPDATE orders SET amount = amount + 1000 WHERE org_id = 'org_acme' AND location_id IN ${outside}`);
  await system.exec(`INSERT INTO orders (id, org_id, order_date, location_id, product_id, channel, customer_id, quantity, amount, cost)
    SELECT (SELECT max(id) FROM orders) + row_number() OVER (), 'org_acme', current_date, l.id,
           (SELECT id FROM products WHERE org_id = 'org_acme' ORDER BY id LIMIT 1), 'outside-scope-channel', 1, 1, 5000, 1
      FROM locations l WHERE l.id IN ${outside}`);
  await system.exec(`UPDATE sales_targets SET target_amount = target_amount + 1000 WHERE org_id = 'org_acme' AND location_id IN ${outside}`);
  await system.exec(`INSERT INTO locations (id, org_id, code, name, city, region) VALUES ('${NEW_LOCATION}', 'org_acme', 'NEW', 'New outside-scope-name', 'Outside City', 'West')`);
  await system.exec(`UPDATE locations SET name = name || ' outside-scope-name', city = 'Outside City' WHERE org_id = 'org_acme' AND id IN ${outside}`);
}

const rounds: { observation: Observation; before: Awaited<ReturnType<Observation["run"]>>; after: Awaited<ReturnType<Observation["run"]>> }[] = [];
const control: { before?: unknown; after?: unknown; locations?: string } = {};

beforeAll(async () => {
  const { system } = await getDb();
  state.outsideNames = (await system.query<{ name: string; city: string }>(`SELECT name, city FROM locations WHERE id = ANY($1)`, [OUTSIDE])).flatMap((l) => [l.name, l.city]);
  const admin = await bearer("admin")();
  state.dashboard = await makePublished(admin, "scope-matrix");
  for (const role of ["admin", "general_manager"] as const) {
    const creator = await bearer(role, SCOPE)();
    const made = await call(await handler("POST /api/v1/custom-dashboards/{id}/embed"), "POST", `/api/v1/custom-dashboards/${state.dashboard}/embed`, {
      token: creator.token,
      params: { id: state.dashboard },
      body: {},
    });
    expect(made.status, made.text).toBe(201);
    state.embeds.push({ creator: creator.label, token: made.json.token });
    const slug = `scope-public-${role.replace("_", "-")}`;
    await makePublished(creator, slug);
    state.publics.push({ creator: creator.label, slug });
  }
  const controlQuery = async () => {
    forgetDashboardResults("org_acme", state.dashboard);
    const res = await call(await handler("POST /api/v1/custom-dashboards/{id}/query"), "POST", `/api/v1/custom-dashboards/${state.dashboard}/query`, {
      token: admin.token,
      params: { id: state.dashboard },
      body: {},
    });
    return comparable(res.json);
  };

  const list = await observations();
  const before = [];
  for (const observation of list) before.push(await observation.run());
  control.before = await controlQuery();
  await changeOutsideLocations();
  for (const [i, observation] of list.entries()) rounds.push({ observation, before: before[i], after: await observation.run() });
  control.after = await controlQuery();
  control.locations = (await call(await handler("GET /api/v1/locations"), "GET", "/api/v1/locations", { token: admin.token })).text;
}, 600_000);

describe("route × role × location-scope matrix (acme callers scoped to two of five locations)", () => {
  it("declares every endpoint of the registry: exercised here, or location does not apply (with the reason)", () => {
    const exercised = new Set(rounds.map((r) => r.observation.endpoint));
    const declared = new Set([...exercised, ...Object.keys(NOT_LOCATION_BEARING)]);
    const registry = ENDPOINTS.map(endpointKey);
    expect(registry.filter((key) => !declared.has(key)), "endpoints with no location-scope decision").toEqual([]);
    expect([...declared].filter((key) => !registry.includes(key)), "declared endpoints that are not in the registry").toEqual([]);
    expect([...exercised].filter((key) => key in NOT_LOCATION_BEARING), "exercised and declared not applicable").toEqual([]);
    expect([...exercised].sort()).toEqual(["GET /api/v1/locations", "POST /api/v1/custom-dashboards/{id}/query", "POST /api/v1/embed/query", "POST /api/v1/public/query"]);
  });

  it("the change to the other locations reaches an unscoped caller's answers (the check can fail)", () => {
    expect(control.after).not.toEqual(control.before);
    expect(JSON.stringify(control.after)).toContain("outside-scope-channel");
    for (const id of [...OUTSIDE, NEW_LOCATION]) expect(control.locations).toContain(id);
  });

  it("observes every scoped caller, embed and public dashboard, unfiltered and filtered to a location outside the scope", () => {
    expect(rounds.length).toBe(SCOPED_CALLERS.length * 3 + (state.embeds.length + state.publics.length) * 2);
    expect(state.embeds.length).toBe(2);
    expect(state.publics.length).toBe(2);
  });

  it("no answer holds a location outside the scope, before or after the change", () => {
    const leaks: string[] = [];
    for (const { observation, before, after } of rounds) {
      for (const [when, res] of [["before", before], ["after", after]] as const) {
        if (res.status !== 200) leaks.push(`${observation.endpoint} ${observation.label} (${when}): status ${res.status} ${res.text.slice(0, 200)}`);
        for (const marker of [...OUTSIDE, NEW_LOCATION, ...state.outsideNames, "outside-scope-channel", "outside-scope-name", "Outside City"]) {
          if (res.text.includes(marker)) leaks.push(`${observation.endpoint} ${observation.label} (${when}): ${marker}`);
        }
      }
      if (observation.showsScope && !SCOPE.some((id) => before.text.includes(id))) leaks.push(`${observation.endpoint} ${observation.label}: shows no in-scope location either`);
    }
    expect(leaks).toEqual([]);
  });

  it("no answer changes when only the locations outside the scope change (totals included)", () => {
    const changed = rounds
      .filter(({ before, after }) => JSON.stringify(comparable(before.json)) !== JSON.stringify(comparable(after.json)))
      .map(({ observation }) => `${observation.endpoint} ${observation.label}`);
    expect(changed).toEqual([]);
  });

  it("widgets answered without errors for the scoped callers (dataset, query dataset and sql widgets alike)", () => {
    const failures: string[] = [];
    for (const { observation, before } of rounds) {
      const widgets = (before.json as { widgets?: Record<string, { error: { detail: string } | null; rows: unknown[] }> }).widgets;
      if (!widgets) continue;
      for (const [id, result] of Object.entries(widgets)) if (result.error) failures.push(`${observation.label} ${id}: ${result.error.detail}`);
      if (observation.showsScope) for (const id of ["total", "by_location", "city_revenue", "sql_locations", "sql_targets"]) if (!widgets[id]?.rows.length) failures.push(`${observation.label} ${id}: no rows`);
    }
    expect(failures).toEqual([]);
  });
});
