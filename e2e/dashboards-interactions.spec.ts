import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type Frame, type Locator, type Page, type Response } from "@playwright/test";
import { sameOrigin } from "./same-origin";

/** Issue 27 §2 and §4: charts that answer a click (cross-filter, drill-through) and embeds that expire gracefully. */

const SAMPLE = "/dashboards/custom/sample-sales";

const widget = (page: Page | Frame, id: string) => page.locator(`section[data-widget-id="${id}"]`);
const isQuery = (response: Response) => /\/(query|embed\/query)$/.test(response.url()) && response.request().method() === "POST";

async function settled(page: Page | Frame) {
  await expect(page.locator("[data-grid-cell]").first()).toBeVisible();
  await expect(page.locator('section[data-widget-id][data-state="skeleton"], section[data-widget-id][data-state="loading"]')).toHaveCount(0);
}

/**
 * Where the bars of a bar chart are, in CSS pixels of its canvas: the lowest row of coloured
 * pixels is the bars' common baseline (axis labels and grid lines are grey), and each run of
 * colour along it is one bar. A point a few pixels above it is inside that bar.
 */
async function barCentres(chart: Locator): Promise<{ x: number; y: number }[]> {
  const canvas = chart.locator("canvas").first();
  await expect(canvas).toBeVisible();
  // The entrance animation grows the bars from the baseline: wait until they stand still.
  let previous = "";
  for (let i = 0; i < 20; i++) {
    const found = await canvas.evaluate((el: HTMLCanvasElement) => {
      const { width, height } = el;
      const pixels = el.getContext("2d")!.getImageData(0, 0, width, height).data;
      const scale = width / el.getBoundingClientRect().width;
      const coloured = (x: number, y: number) => {
        const i = (y * width + x) * 4;
        return pixels[i + 3] > 200 && Math.max(pixels[i], pixels[i + 1], pixels[i + 2]) - Math.min(pixels[i], pixels[i + 1], pixels[i + 2]) > 60;
      };
      for (let y = height - 1; y >= 0; y--) {
        const runs: [number, number][] = [];
        let start = -1;
        for (let x = 0; x <= width; x++) {
          const on = x < width && coloured(x, y);
          if (on && start < 0) start = x;
          if (!on && start >= 0) {
            if (x - start >= 4 * scale) runs.push([start, x]);
            start = -1;
          }
        }
        if (runs.length > 0) return runs.map(([a, b]) => ({ x: Math.round((a + b) / 2 / scale), y: Math.round(y / scale) - 4 }));
      }
      return [];
    });
    const key = JSON.stringify(found);
    if (found.length > 0 && key === previous) return found;
    previous = key;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error("no bars found on the chart");
}

async function clickBar(page: Page | Frame, id: string, index = 0) {
  const chart = widget(page, id);
  const bars = await barCentres(chart);
  expect(bars.length).toBeGreaterThan(index);
  await chart.locator("canvas").first().click({ position: bars[index] });
}

test.describe.configure({ mode: "serial" });

test("a click on a bar sets the page's filter, shows a chip, re-queries the widgets, and the chip undoes it", async ({ page }) => {
  await page.goto(`${SAMPLE}?tab=overview`);
  await settled(page);
  await expect(page.getByTestId("click-chips")).toHaveCount(0);

  const requery = page.waitForResponse(isQuery);
  await clickBar(page, "revenue_by_location", 1);
  const answer = await requery;
  const sent = answer.request().postDataJSON() as { filters: Record<string, unknown>; widget_ids: string[] };
  // One id from the bar's row (location_id, which the chart does not draw), as the multiple select holds it.
  expect(sent.filters.location_filter).toEqual([expect.stringMatching(/^loc_acme_/)]);
  expect(sent.widget_ids).toEqual(expect.arrayContaining(["revenue_kpi", "revenue_trend", "revenue_by_location"]));
  await expect(page).toHaveURL(/f\.location_filter=/);

  const chip = page.getByTestId("click-chip");
  await expect(chip).toHaveCount(1);
  await expect(chip).toContainText("Locations:");
  await expect(chip).toContainText("(from Revenue by location)");
  const name = (await chip.textContent())!.replace(/^Locations: /, "").replace(/ \(from.*$/, "").replace(/×$/, "").trim();
  await expect(widget(page, "location_filter")).toContainText(name);
  await settled(page);

  // A second click (the chart now shows the one location: its only bar) takes the chip over rather than adding one.
  await clickBar(page, "revenue_by_location", 0);
  await expect(page.getByTestId("click-chip")).toHaveCount(1);
  await expect(page.getByTestId("click-chip")).toContainText(name);

  // A reload keeps the chip and its undo (the tab's sessionStorage; the URL keeps the filter).
  await page.reload();
  await settled(page);
  await expect(page.getByTestId("click-chip")).toHaveCount(1);
  await expect(page.getByTestId("click-chip")).toContainText(name);

  // Undo goes back to before the first click: the filter's default (no value in the URL).
  const back = page.waitForResponse(isQuery);
  await chip.getByRole("button", { name: /^Undo Locations:/ }).click();
  expect(((await back).request().postDataJSON() as { filters: Record<string, unknown> }).filters).not.toHaveProperty("location_filter");
  await expect(page).not.toHaveURL(/f\.location_filter=/);
  await expect(page.getByTestId("click-chip")).toHaveCount(0);
  await settled(page);
});

test("a drill-through opens its target dashboard with the clicked values", async ({ page }) => {
  const slug = `drill-source-${Date.now()}`;
  const spec = `version: "1.0"
kind: dashboard
metadata: { id: drill-source, name: Drill source }
spec:
  datasets:
    - id: sales
      from: orders JOIN locations ON locations.id = orders.location_id
      dimensions:
        - { id: location, column: locations.name }
        - { id: location_id, column: orders.location_id }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
---
version: "1.0"
kind: widget
metadata: { id: by_location, name: All-time revenue by location }
spec:
  component: echarts
  layout: { x: 0, y: 0, w: 12, h: 5 }
  data: { kind: dataset, dataset: sales, columns: [location, location_id, revenue], mappings: { x: location, y: revenue } }
  display: { echarts: { option: { xAxis: { type: category }, yAxis: { type: value }, series: [{ type: bar }] } } }
  on_click:
    drill_through: { dashboard: sample-sales, tab: analysis, filters: [{ filter: location_filter, field: location_id }] }
`;
  const created = await page.request.post("/api/v1/custom-dashboards", { headers: sameOrigin(), data: { name: "Drill source", slug, spec_yaml: spec } });
  expect(created.status()).toBe(201);
  expect((await page.request.post(`/api/v1/custom-dashboards/${slug}/publish`, { headers: sameOrigin() })).status()).toBe(200);

  await page.goto(`/dashboards/custom/${slug}`);
  await settled(page);
  await clickBar(page, "by_location", 0);
  await expect(page).toHaveURL(/\/dashboards\/custom\/sample-sales\?tab=analysis&f\.location_filter=/);
  const params = new URL(page.url()).searchParams;
  expect(JSON.parse(params.get("f.location_filter")!)).toEqual([expect.stringMatching(/^loc_acme_/)]);
  await expect(page.getByRole("tab", { name: "Analysis" })).toHaveAttribute("aria-selected", "true");
  await settled(page);
  // The target's own filter shows the passed location, and its widgets were computed for it.
  await expect(widget(page, "location_table").locator("table tbody tr")).toHaveCount(1);
});

/** The embed of the sample with `options`, made by the signed-in admin. */
async function makeEmbed(page: Page, options: Record<string, unknown>): Promise<{ url: string; token: string; embed_id: string }> {
  const created = await page.request.post("/api/v1/custom-dashboards/sample-sales/embed", { headers: sameOrigin(), data: options });
  expect(created.status()).toBe(201);
  return created.json();
}

test("in an embed, a click never changes a filter the grant locks", async ({ page, browser }) => {
  const embed = await makeEmbed(page, { locked_filters: { location_filter: ["loc_acme_bos"] }, expires_in: 3600 });
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  const visitor = await context.newPage();
  await visitor.goto(new URL(embed.url).pathname);
  await settled(visitor);
  const queries: string[] = [];
  visitor.on("request", (request) => {
    if (request.url().endsWith("/api/v1/embed/query")) queries.push(request.postData() ?? "");
  });
  await clickBar(visitor, "revenue_by_location", 0);
  await expect(visitor.getByTestId("click-note")).toContainText("Locations is fixed by the page that embeds this dashboard");
  await expect(visitor.getByTestId("click-chip")).toHaveCount(0);
  expect(visitor.url()).not.toContain("f.location_filter");
  expect(queries).toEqual([]);
  await expect(widget(visitor, "location_filter")).toContainText("Boston Back Bay");
  await context.close();
});

test("an expired embed shows one banner and keeps its layout; the host page's postMessage renews a token without a reload", async ({ page, browser }) => {
  test.setTimeout(180_000);
  // The partner: a page on another origin framing two embeds, and its "back end" handing out a fresh token.
  let fresh = "";
  const host = http.createServer((req, res) => {
    if (req.url === "/new-token") {
      res.writeHead(200, { "content-type": "text/plain" }).end(fresh);
      return;
    }
    const app = new URL(String(test.info().project.use.baseURL)).origin;
    res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><title>Partner</title>
<iframe id="renewed" width="1200" height="900"></iframe><iframe id="left" width="1200" height="900"></iframe>
<script>
  window.received = [];
  const frames = { renewed: document.getElementById("renewed"), left: document.getElementById("left") };
  const params = new URLSearchParams(location.search);
  frames.renewed.src = params.get("renewed");
  frames.left.src = params.get("left");
  window.addEventListener("message", async (event) => {
    if (event.origin !== ${JSON.stringify(app)}) return;
    const from = event.source === frames.renewed.contentWindow ? "renewed" : "left";
    window.received.push({ from, ...event.data });
    // Only the first frame's partner renews; the other one lets its link run out (until the test says renewLeft).
    if ((from === "renewed" || window.renewLeft) && (event.data.type === "quarry:token-expiring" || event.data.type === "quarry:token-expired")) {
      const token = await (await fetch("/new-token")).text();
      frames[from].contentWindow.postMessage({ type: "quarry:token", token }, ${JSON.stringify(app)});
    }
  });
</script>`);
  });
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
  const hostOrigin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
  try {
    const short = { expires_in: 60, allowed_origins: [hostOrigin] };
    const renewed = await makeEmbed(page, short);
    const left = await makeEmbed(page, short);
    fresh = (await makeEmbed(page, { expires_in: 3600, allowed_origins: [hostOrigin] })).token;

    const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
    const partner = await context.newPage();
    const pageErrors: string[] = [];
    partner.on("pageerror", (error) => pageErrors.push(error.message));
    await partner.goto(`${hostOrigin}/?renewed=${encodeURIComponent(renewed.url)}&left=${encodeURIComponent(left.url)}`);
    const frameOf = async (id: string) => (await partner.locator(`#${id}`).elementHandle())!.contentFrame() as Promise<Frame>;
    const renewedFrame = await frameOf("renewed");
    const leftFrame = await frameOf("left");
    await settled(renewedFrame);
    await settled(leftFrame);
    // Set in the frame's window: still there after the renewal means the frame was not reloaded.
    await renewedFrame.evaluate(() => Object.assign(window, { beforeRenewal: true }));

    // Half-way through its minute the frame asks for a new token; the partner answers; the frame verifies and adopts it.
    await expect(async () => expect(renewedFrame.url()).toContain(fresh)).toPass({ timeout: 60_000 });
    expect(await renewedFrame.evaluate(() => (window as unknown as { beforeRenewal?: boolean }).beforeRenewal)).toBe(true);
    const received = (await partner.evaluate(() => (window as unknown as { received: { from: string; type: string; embed_id: string }[] }).received)) ?? [];
    expect(received).toContainEqual(expect.objectContaining({ from: "renewed", type: "quarry:token-expiring", embed_id: renewed.embed_id }));

    // The other frame's link runs out: one banner, the layout and figures kept, no error box per widget.
    await expect(leftFrame.getByTestId("embed-expired")).toBeVisible({ timeout: 60_000 });
    await expect(leftFrame.getByTestId("embed-expired")).toContainText("This embed link has expired");
    await expect(async () => {
      const all = await partner.evaluate(() => (window as unknown as { received: { from: string; type: string }[] }).received);
      expect(all).toContainEqual(expect.objectContaining({ from: "left", type: "quarry:token-expired" }));
    }).toPass();
    await expect(widget(leftFrame, "revenue_kpi").locator("output")).not.toHaveText("");
    // A filter change now answers 401: still one banner, and no widget turns into an error.
    const refused = leftFrame.page().waitForResponse((r) => r.url().endsWith("/api/v1/embed/query"));
    await widget(leftFrame, "date").locator("input[type=text]").fill("2026-10-01 to 2026-10-31");
    await widget(leftFrame, "date").locator("input[type=text]").press("Enter");
    expect((await refused).status()).toBe(401);
    await expect(leftFrame.getByTestId("embed-expired")).toHaveCount(1);
    await expect(leftFrame.locator('section[data-state="error"]')).toHaveCount(0);
    await expect(widget(leftFrame, "revenue_kpi").locator("output")).not.toHaveText("");

    // The renewed frame works past the first token's expiry: its queries carry the new token and succeed.
    await expect(renewedFrame.getByTestId("embed-expired")).toHaveCount(0);
    const ok = renewedFrame.page().waitForResponse((r) => r.url().endsWith("/api/v1/embed/query") && (r.request().postDataJSON() as { token: string }).token === fresh);
    await widget(renewedFrame, "date").locator("input[type=text]").fill("2026-10-01 to 2026-10-31");
    await widget(renewedFrame, "date").locator("input[type=text]").press("Enter");
    expect((await ok).status()).toBe(200);
    await settled(renewedFrame);
    await expect(renewedFrame.locator('section[data-state="error"]')).toHaveCount(0);

    // Loaded again after its link ran out, the frame asks its partner for a new one instead of ending at an error page.
    await partner.evaluate(() => Object.assign(window, { renewLeft: true }));
    await leftFrame.goto(left.url);
    await expect(async () => expect(leftFrame.url()).toContain(fresh)).toPass({ timeout: 30_000 });
    await settled(leftFrame);
    await expect(leftFrame.getByTestId("embed-expired")).toHaveCount(0);
    await expect(widget(leftFrame, "revenue_kpi").locator("output")).not.toHaveText("");
    expect(pageErrors).toEqual([]);
    await context.close();
  } finally {
    await new Promise((resolve) => host.close(resolve));
  }
});

test("a token offered by another origin is ignored", async ({ page, browser }) => {
  const embed = await makeEmbed(page, { expires_in: 3600, allowed_origins: ["https://partner.example"] });
  const other = await makeEmbed(page, { expires_in: 3600 });
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  const visitor = await context.newPage();
  // Opened directly, the embed's parent is itself: a message from its own origin is not from an allowed partner.
  await visitor.goto(new URL(embed.url).pathname);
  await settled(visitor);
  await visitor.evaluate((token) => window.postMessage({ type: "quarry:token", token }, "*"), other.token);
  await visitor.waitForTimeout(1000);
  expect(visitor.url()).toContain(embed.token);
  await context.close();
});
