import { expect, test, type Page, type Response } from "@playwright/test";

/**
 * Issue 44 §4: charts that answer a click say so and are operable by keyboard. A clickable chart is focusable, arrows
 * move between its points (read out in a live region and kept in `data-chart-point`), Enter clicks the point; a click
 * anywhere on a line's plot picks the nearest day. Charts that answer no click are neither focusable nor hinted.
 */

const SAMPLE = "/dashboards/custom/sample-sales";

const widget = (page: Page, id: string) => page.locator(`section[data-widget-id="${id}"]`);
const chartOf = (page: Page, id: string) => widget(page, id).getByRole("application");
const isQuery = (response: Response) => /\/query$/.test(response.url()) && response.request().method() === "POST";

async function settled(page: Page) {
  await expect(page.locator("[data-grid-cell]").first()).toBeVisible();
  await expect(page.locator('section[data-widget-id][data-state="skeleton"], section[data-widget-id][data-state="loading"]')).toHaveCount(0);
}

test.describe.configure({ mode: "serial" });

test("a clickable chart says what a click does; one that answers none is an image, not a stop for Tab", async ({ page }) => {
  await page.goto(`${SAMPLE}?tab=overview`);
  await settled(page);
  await expect(widget(page, "revenue_by_location").getByText("Click a point to filter the page by it")).toBeVisible();
  await expect(widget(page, "revenue_trend").getByText("Click a point to open its details")).toBeVisible();
  await expect(chartOf(page, "revenue_by_location")).toHaveAttribute("tabindex", "0");
  const pie = widget(page, "channel_mix");
  await expect(pie.getByRole("img")).toBeVisible();
  await expect(pie.getByRole("application")).toHaveCount(0);
  await expect(pie.getByText(/Click a point/)).toHaveCount(0);
});

test("arrows walk the bars and Enter sets the page's filter, as a click on the bar does", async ({ page }) => {
  await page.goto(`${SAMPLE}?tab=overview`);
  await settled(page);
  const chart = chartOf(page, "revenue_by_location");
  await expect(chart.locator("canvas").first()).toBeVisible();
  await chart.focus();
  await expect(chart).toBeFocused();

  await page.keyboard.press("ArrowRight");
  const first = await chart.getAttribute("data-chart-point");
  expect(first).toMatch(/^[A-Z][^:]+: Revenue: [\d,.]+$/);
  await page.keyboard.press("ArrowRight");
  const second = await chart.getAttribute("data-chart-point");
  expect(second).not.toBe(first);
  // The live region reads the point out.
  await expect(widget(page, "revenue_by_location").locator('[aria-live="polite"]')).toHaveText(second!);
  await page.keyboard.press("ArrowLeft");
  await expect(chart).toHaveAttribute("data-chart-point", first!);

  const requery = page.waitForResponse(isQuery);
  await page.keyboard.press("Enter");
  const sent = (await requery).request().postDataJSON() as { filters: Record<string, unknown> };
  expect(sent.filters.location_filter).toEqual([expect.stringMatching(/^loc_acme_/)]);
  const chip = page.getByTestId("click-chips");
  await expect(chip).toBeVisible();
  await expect(chip).toContainText(first!.split(":")[0]);
});

test("Enter on a day of the line drills through to that day", async ({ page }) => {
  await page.goto(`${SAMPLE}?tab=overview`);
  await settled(page);
  const chart = chartOf(page, "revenue_trend");
  await expect(chart.locator("canvas").first()).toBeVisible();
  await chart.focus();
  await page.keyboard.press("Home");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  const point = await chart.getAttribute("data-chart-point");
  // The point's name is its day as the data holds it; the axis shows it as "Oct 3".
  const day = /^(\d{4}-\d{2}-\d{2})/.exec(point ?? "")?.[1];
  expect(day).toBeTruthy();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/tab=analysis/);
  expect(new URL(page.url()).searchParams.get("f.date")).toContain(day!);
});

test("a click on the line's area, away from its points, picks the nearest day", async ({ page }) => {
  await page.goto(`${SAMPLE}?tab=overview`);
  await settled(page);
  const canvas = chartOf(page, "revenue_trend").locator("canvas").first();
  await expect(canvas).toBeVisible();
  const box = (await canvas.boundingBox())!;
  // Low in the middle of the plot: inside the filled area, far below the line and its symbols.
  await canvas.click({ position: { x: Math.round(box.width / 2), y: Math.round(box.height * 0.8) } });
  await expect(page).toHaveURL(/tab=analysis/);
  expect(new URL(page.url()).searchParams.get("f.date")).toMatch(/\d{4}-\d{2}-\d{2}/);
});
