import fs from "node:fs";
import { expect, test, type Page, type Response } from "@playwright/test";
import { sameOrigin } from "./same-origin";

/** The bundled sample, loaded at the demo start (lib/dashboards/demo.ts). */
const SAMPLE = "/dashboards/custom/sample-sales";
const MANHATTAN = "Manhattan Flagship";

/** Console errors and uncaught exceptions of a page; every test asserts there are none. */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message) => {
    // The app has no favicon; the browser's automatic request for it is not the page's error.
    if (message.type() === "error" && !message.location().url.endsWith("/favicon.ico")) errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  return errors;
}

const widget = (page: Page, id: string) => page.locator(`section[data-widget-id="${id}"]`);

/** Every widget of the tab is painted: no skeleton, no pending re-query. */
async function allSettled(page: Page) {
  await expect(page.getByTestId("dashboard-grid").locator("[data-grid-cell]").first()).toBeVisible();
  await expect(page.locator('section[data-widget-id][data-state="skeleton"], section[data-widget-id][data-state="loading"]')).toHaveCount(0);
}

/** Each chart has drawn: scrolled to first, since a chart starts only when it comes near the viewport (issue 31 §5). */
async function expectCharts(page: Page, ids: string[]) {
  for (const id of ids) {
    await widget(page, id).scrollIntoViewIfNeeded();
    await expect(widget(page, id).locator("canvas").first()).toBeVisible();
  }
}

const isQuery = (response: Response) => response.url().endsWith("/query") && response.request().method() === "POST";

test.describe.configure({ mode: "serial" });

test("the list opens the seeded dashboard, and every component type renders without console errors", async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto("/dashboards/custom");
  await expect(page.getByRole("heading", { level: 1, name: "Dashboards" })).toBeVisible();
  await page.locator('[data-testid="dashboard-card"][data-slug="sample-sales"]').click();
  await expect(page).toHaveURL(new RegExp(`${SAMPLE}$`));
  await expect(page.getByRole("heading", { level: 1, name: "Sales overview" })).toBeVisible();
  await allSettled(page);

  // Overview tab: KPIs and charts (line, bar, pie, gauge), header and footer bands, both filters.
  for (const id of ["revenue_kpi", "orders_kpi", "margin_kpi", "target_kpi"]) await expect(widget(page, id).locator("output")).not.toHaveText("");
  await expectCharts(page, ["revenue_trend", "revenue_by_location", "channel_mix", "margin_gauge"]);
  await expect(page.getByTestId("dashboard-header")).toContainText("Sales overview");
  await expect(page.getByTestId("dashboard-footer")).toContainText("Targets are monthly");
  await expect(widget(page, "date").locator("input[type=text]")).toHaveValue("last month");
  await expect(widget(page, "location_filter")).toBeVisible();
  await page.screenshot({ path: "test-results/dashboard-desktop.png", fullPage: true });

  // Analysis tab: heatmap, radar, scatter, table, tabulator, markdown, image; the tab goes into the URL.
  await page.getByRole("tab", { name: "Analysis" }).click();
  await expect(page).toHaveURL(/tab=analysis/);
  await allSettled(page);
  await expectCharts(page, ["weekday_heatmap", "category_radar", "order_scatter"]);
  await expect(widget(page, "location_table").locator("table tbody tr").first()).toBeVisible();
  await expect(widget(page, "channel_totals").locator("table tbody tr").first()).toBeVisible();
  await expect(widget(page, "order_grid").locator(".tabulator-row").first()).toBeVisible();
  await expect(widget(page, "notes").locator("h3", { hasText: "Reading this page" })).toBeVisible();
  await expect(widget(page, "logo").locator("img")).toHaveAttribute("alt", "Quarry");
  await page.screenshot({ path: "test-results/dashboard-desktop-analysis.png", fullPage: true });

  // The back button returns to the overview tab.
  await page.goBack();
  await expect(page).toHaveURL(new RegExp(`${SAMPLE}$`));
  await expect(page.getByRole("tab", { name: "Overview" })).toHaveAttribute("aria-selected", "true");
  // Keyboard: the selected tab is focusable and the arrow keys switch tabs.
  await page.getByRole("tab", { name: "Overview" }).focus();
  await page.keyboard.press("ArrowRight");
  await expect(page).toHaveURL(/tab=analysis/);
  await expect(page.getByRole("tab", { name: "Analysis" })).toBeFocused();
  expect(errors).toEqual([]);
});

test("changing the location filter re-queries only bound widgets, changing a KPI's value and a chart's data, and lives in the URL", async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto(SAMPLE);
  await allSettled(page);
  const kpi = widget(page, "revenue_kpi").locator("output");
  const before = await kpi.getAttribute("data-value");
  const chartBefore = await widget(page, "revenue_by_location").locator("canvas").first().screenshot();

  const answer = page.waitForResponse(isQuery);
  await widget(page, "location_filter").getByRole("button", { name: "Locations" }).click();
  // The box follows the URL, which updates a moment after the click: click, then expect.
  await page.getByRole("checkbox", { name: MANHATTAN }).click();
  await expect(page.getByRole("checkbox", { name: MANHATTAN })).toBeChecked();
  await page.keyboard.press("Escape");
  const response = await answer;
  const sent = response.request().postDataJSON() as { filters: Record<string, unknown>; widget_ids: string[] };
  expect(sent.filters.location_filter).toEqual(["loc_acme_nyc"]);
  // Bound widgets only: never text, markdown, images, or the location filter itself.
  expect(sent.widget_ids).toContain("revenue_kpi");
  expect(sent.widget_ids).not.toContain("title");
  expect(sent.widget_ids).not.toContain("location_filter");
  const body = (await response.json()) as { widgets: Record<string, { rows: Record<string, unknown>[] }> };
  expect(body.widgets.revenue_by_location.rows.map((r) => r.location)).toEqual([MANHATTAN]);

  await expect(page).toHaveURL(/f\.location_filter=/);
  await allSettled(page);
  await expect(kpi).not.toHaveAttribute("data-value", before ?? "");
  const after = Number(await kpi.getAttribute("data-value"));
  expect(after).toBeGreaterThan(0);
  expect(after).toBeLessThan(Number(before));
  expect((await widget(page, "revenue_by_location").locator("canvas").first().screenshot()).equals(chartBefore)).toBe(false);

  // The URL is the state: a reload shows the same filtered numbers, rendered by the server.
  await page.reload();
  await allSettled(page);
  await expect(kpi).toHaveAttribute("data-value", String(after));
  expect(errors).toEqual([]);
});

/** The total of the Tabulator grid's pagination counter ("Showing 1-25 of 412 rows"). */
async function gridTotal(page: Page): Promise<number> {
  const text = (await widget(page, "order_grid").locator(".tabulator-page-counter").textContent()) ?? "";
  const match = /of\s+(\d+)/.exec(text);
  if (!match) throw new Error(`no row count in '${text}'`);
  return Number(match[1]);
}

test("a date expression typed into the date filter narrows the table, and CSV export matches the grid", async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto(`${SAMPLE}?tab=analysis`);
  await allSettled(page);
  const wide = await gridTotal(page);
  expect(wide).toBeGreaterThan(0);

  const input = widget(page, "date").locator("input[type=text]");
  await input.fill("2026-10-05 to 2026-10-06");
  await expect(widget(page, "date")).toContainText("Oct");
  await input.press("Enter");
  await expect(page).toHaveURL(/f\.date=2026-10-05/);
  await allSettled(page);
  await expect.poll(() => gridTotal(page)).toBeLessThan(wide);
  const narrow = await gridTotal(page);
  expect(narrow).toBeGreaterThan(0);
  const cells = widget(page, "order_grid").locator('.tabulator-row .tabulator-cell[tabulator-field="order_date"]');
  for (const text of await cells.allTextContents()) expect(text).toMatch(/2026-10-0[56]|Oct(ober)? [56]/);

  const download = page.waitForEvent("download");
  await widget(page, "order_grid").locator("button[data-export=csv]").click();
  const file = await (await download).path();
  const lines = fs.readFileSync(file, "utf8").replace(/^\uFEFF/, "").trim().split(/\r?\n/);
  expect(lines.length - 1).toBe(narrow);
  const header = lines[0].split(",").map((h) => h.replace(/"/g, ""));
  const idColumn = header.findIndex((h) => /order.?id/i.test(h));
  expect(idColumn).toBeGreaterThanOrEqual(0);
  const csvIds = new Set(lines.slice(1).map((l) => l.split(",")[idColumn].replace(/"/g, "")));
  const shownIds = await widget(page, "order_grid").locator('.tabulator-row .tabulator-cell[tabulator-field="order_id"]').allTextContents();
  expect(shownIds.length).toBeGreaterThan(0);
  for (const id of shownIds) expect(csvIds.has(id.trim())).toBe(true);
  expect(errors).toEqual([]);
});

test("on a phone the widgets stack full width in reading order", async ({ browser }) => {
  const context = await browser.newContext({ storageState: "e2e/.auth/admin.json", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(SAMPLE);
  await allSettled(page);
  const grid = await page.getByTestId("dashboard-grid").boundingBox();
  const ids = ["revenue_kpi", "orders_kpi", "margin_kpi", "target_kpi", "revenue_trend", "revenue_by_location"];
  let lastBottom = -1;
  for (const id of ids) {
    const box = await widget(page, id).boundingBox();
    expect(box, id).not.toBeNull();
    expect(Math.abs(box!.x - grid!.x)).toBeLessThan(4);
    expect(box!.width).toBeGreaterThan(grid!.width - 8);
    expect(box!.y).toBeGreaterThanOrEqual(lastBottom);
    lastBottom = box!.y + box!.height;
  }
  // Nothing overflows the phone's width.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.screenshot({ path: "test-results/dashboard-mobile.png", fullPage: true });
  expect(errors).toEqual([]);
  await context.close();
});

test("the server's HTML is laid out: every cell carries its grid areas, and the browser puts widgets in their manifest boxes", async ({ page }) => {
  // The document as the server streams it, before any script: cells with their areas, no measuring placeholder.
  const html = await (await page.request.get(SAMPLE)).text();
  expect(html).toMatch(/data-widget-id="revenue_trend"/);
  expect(html).toContain("--area-desktop:3 / 1 / span 4 / span 8");
  expect(html).toContain("--area-mobile:");

  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(SAMPLE);
  await allSettled(page);
  const grid = (await page.getByTestId("dashboard-grid").boundingBox())!;
  const column = (grid.width - 11 * 14) / 12;
  // revenue_trend: x 0, w 8, h 4 in the sample manifest; revenue_by_location sits beside it (x 8, w 4).
  const trend = (await widget(page, "revenue_trend").boundingBox())!;
  expect(Math.abs(trend.x - grid.x)).toBeLessThan(2);
  expect(Math.abs(trend.width - (8 * column + 7 * 14))).toBeLessThan(2);
  expect(Math.abs(trend.height - (4 * 76 + 3 * 14))).toBeLessThan(2);
  const beside = (await widget(page, "revenue_by_location").boundingBox())!;
  expect(Math.abs(beside.x - (grid.x + 8 * (column + 14)))).toBeLessThan(2);
  expect(Math.abs(beside.y - trend.y)).toBeLessThan(2);
  await page.screenshot({ path: "test-results/dashboard-desktop.png", fullPage: true });
});

test("the embed page renders with a token, keeps locked filters read-only, lets only the partner frame it, and refuses a tampered token", async ({ page, browser }) => {
  // A signed-in write must carry this site's Origin (CSRF check); Playwright's request context sends none by itself.
  const created = await page.request.post(`/api/v1/custom-dashboards/sample-sales/embed`, {
    headers: sameOrigin(),
    data: { locked_filters: { location_filter: ["loc_acme_bos"] }, allowed_origins: ["https://partner.example"], expires_in: 3600 },
  });
  expect(created.status()).toBe(201);
  const embed = (await created.json()) as { url: string; token: string; iframe: string };
  expect(embed.iframe).toContain(`src="${embed.url}"`);

  // A stranger's browser: no session at all.
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  const visitor = await context.newPage();
  const errors = watchErrors(visitor);
  const response = await visitor.goto(new URL(embed.url).pathname);
  expect(response?.status()).toBe(200);
  expect(response?.headers()["content-security-policy"]).toMatch(/(^|; )frame-ancestors https:\/\/partner\.example($|;)/);
  expect(response?.headers()["x-frame-options"]).toBeUndefined();
  await expect(visitor.getByTestId("embed")).toBeVisible();
  await expect(visitor.locator("header.topbar")).toHaveCount(0);
  await allSettled(visitor);
  await expect(widget(visitor, "revenue_kpi").locator("output")).not.toHaveText("");
  await expect(widget(visitor, "location_filter")).toContainText("Boston Back Bay");
  await expect(widget(visitor, "location_filter").getByRole("button", { name: "Locations" })).toHaveCount(0);
  // Re-queries go through the embed endpoint with the token; the date filter stays usable.
  const answer = visitor.waitForResponse((r) => r.url().endsWith("/api/v1/embed/query"));
  await widget(visitor, "date").locator("input[type=text]").fill("2026-10-01 to 2026-10-31");
  await widget(visitor, "date").locator("input[type=text]").press("Enter");
  expect((await answer).status()).toBe(200);
  await allSettled(visitor);
  expect(errors).toEqual([]);

  // One changed character in the signature: a clear page, not a 500, and no data.
  const last = embed.token.at(-2) === "A" ? "B" : "A";
  const tampered = `${embed.token.slice(0, -2)}${last}${embed.token.at(-1)}`;
  const refused = await visitor.goto(`/embed/${tampered}`);
  expect(refused?.status()).toBe(200);
  await expect(visitor.getByTestId("embed-error")).toContainText("not valid");
  await expect(visitor.locator("section[data-widget-id]")).toHaveCount(0);
  await context.close();

  // Every other page still refuses to be framed.
  const normal = await page.goto(SAMPLE);
  expect(normal?.headers()["content-security-policy"]).toMatch(/(^|; )frame-ancestors 'none'($|;)/);
});

test("preview shows what an embed consumer sees: no app chrome, filters included", async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto(`${SAMPLE}/preview`);
  await expect(page.getByTestId("dashboard-preview")).toBeVisible();
  await expect(page.locator("header.topbar")).toHaveCount(0);
  await allSettled(page);
  await expect(widget(page, "date")).toBeVisible();
  await expect(widget(page, "location_filter")).toBeVisible();
  expect(errors).toEqual([]);
});

test("a globex user cannot open acme's dashboard", async ({ page, browser }) => {
  const acme = (await (await page.request.get("/api/v1/custom-dashboards/sample-sales")).json()) as { id: string };
  const context = await browser.newContext({ storageState: "e2e/.auth/globex-admin.json" });
  const globex = await context.newPage();
  await globex.goto(`/dashboards/custom/${acme.id}`);
  await expect(globex.getByTestId("dashboard-missing")).toBeVisible();
  await expect(globex.locator("section[data-widget-id]")).toHaveCount(0);
  const query = await globex.request.post(`/api/v1/custom-dashboards/${acme.id}/query`, { data: {}, headers: sameOrigin() });
  expect(query.status()).toBe(404);
  // Globex's own sample is its own data: no acme location in its filter.
  await globex.goto(SAMPLE);
  await allSettled(globex);
  await widget(globex, "location_filter").getByRole("button", { name: "Locations" }).click();
  await expect(globex.getByRole("checkbox", { name: "Berlin Mitte" })).toBeVisible();
  await expect(globex.getByRole("checkbox", { name: MANHATTAN })).toHaveCount(0);
  await context.close();
});

test("the editor shows line-numbered errors as you type and a live preview", async ({ page }) => {
  const errors = watchErrors(page);
  // The rollup table is in the first paint: the server's HTML has it, before the browser asks for anything.
  expect(await (await page.request.get(`${SAMPLE}/edit`)).text()).toContain('data-testid="rollup-sales_by_location_day"');
  await page.goto(`${SAMPLE}/edit`);
  await expect(page.getByTestId("manifest-valid")).toBeVisible();
  await allSettled(page);
  // Under the manifest, each rollup the sample declares, with its build state (issue 31 §2).
  const rollups = page.getByTestId("rollup-status");
  for (const name of ["sales_by_location_day", "sales_by_channel_category_day", "orders_by_day"]) {
    await expect(rollups.getByTestId(`rollup-${name}`)).toContainText(/ready|building|failed|built on publish/);
  }
  const content = page.locator(".cm-content");
  await content.click();
  await page.keyboard.press("Control+Home");
  await page.keyboard.type("bogus_key: 1\n");
  await expect(page.getByTestId("manifest-problems")).toContainText("line 1");
  await expect(page.getByTestId("manifest-problems")).toContainText("bogus_key");
  await expect(page.locator(".cm-lintRange-error").first()).toBeVisible();
  // Remove the line again; the manifest is valid again and nothing was saved.
  await page.keyboard.press("Control+Home");
  await page.keyboard.press("Shift+ArrowDown");
  await page.keyboard.press("Backspace");
  await expect(page.getByTestId("manifest-valid")).toBeVisible();
  expect(errors).toEqual([]);
});

test("a sql widget cut by the row cap says so, and a filter finds rows past the first 5,000", async ({ page }) => {
  const errors = watchErrors(page);
  const spec = `version: "1.0"
kind: dashboard
metadata: { id: capped, name: Capped }
spec:
  tabs: [{ id: main, name: Main, widgets: [channel, orders] }]
---
version: "1.0"
kind: widget
metadata: { id: channel, name: Channel }
spec:
  component: filter
  layout: { x: 0, y: 0, w: 3, h: 2 }
  display: { filter: { control: select, options: [online, partner, store] } }
  bindings: [{ target: orders, field: channel, operator: eq }]
---
version: "1.0"
kind: widget
metadata: { id: orders, name: Orders }
spec:
  component: table
  layout: { x: 0, y: 2, w: 12, h: 6 }
  data:
    kind: sql
    query: "SELECT id, channel FROM orders ORDER BY CASE channel WHEN 'partner' THEN 1 ELSE 0 END, id"
`;
  const created = await page.request.post("/api/v1/custom-dashboards", { headers: sameOrigin(), data: { name: "Capped", slug: `capped-${Date.now()}`, spec_yaml: spec } });
  expect(created.status()).toBe(201);
  const { id, slug } = (await created.json()) as { id: string; slug: string };
  expect((await page.request.post(`/api/v1/custom-dashboards/${id}/publish`, { headers: sameOrigin() })).status()).toBeLessThan(300);

  await page.goto(`/dashboards/custom/${slug}`);
  await allSettled(page);
  await expect(widget(page, "orders").getByRole("note")).toHaveText("Showing the first 5,000 rows; more match. Narrow the filters to see the rest.");
  // Partner rows all come after the first 5,000: the filter runs in SQL, before the cap.
  await page.goto(`/dashboards/custom/${slug}?f.channel=partner`);
  await allSettled(page);
  await expect(widget(page, "orders")).toContainText("partner");
  await expect(widget(page, "orders")).not.toContainText("online");
  expect(errors).toEqual([]);
});
