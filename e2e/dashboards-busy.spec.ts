import { expect, test, type Page } from "@playwright/test";

/*
 * Issue 31 §3: a busy server (503 with Retry-After: no engine slot or connection in time) is no
 * error box. The viewer says it is busy and when it tries again, waits the Retry-After (then twice
 * as long), and shows the widgets once an answer comes. The 503s are the browser's own route
 * answers, the later request goes to the real server.
 */
const SAMPLE = "/dashboards/custom/sample-sales";
const MANHATTAN = "Manhattan Flagship";

const widget = (page: Page, id: string) => page.locator(`section[data-widget-id="${id}"]`);

async function allSettled(page: Page) {
  await expect(page.getByTestId("dashboard-grid").locator("[data-grid-cell]").first()).toBeVisible();
  await expect(page.locator('section[data-widget-id][data-state="skeleton"], section[data-widget-id][data-state="loading"]')).toHaveCount(0);
}

test("a busy server: the viewer says so, retries after Retry-After with back-off, then shows the data", async ({ page }) => {
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await page.goto(SAMPLE);
  await allSettled(page);

  const asked: number[] = [];
  await page.route("**/api/v1/custom-dashboards/*/query", async (route) => {
    asked.push(Date.now());
    if (asked.length <= 2) {
      await route.fulfill({ status: 503, headers: { "retry-after": "1" }, contentType: "application/json", body: JSON.stringify({ detail: "The database is busy; retry shortly" }) });
      return;
    }
    await route.continue();
  });

  const answered = page.waitForResponse((r) => r.url().endsWith("/query") && r.request().method() === "POST" && r.status() === 200);
  await widget(page, "location_filter").getByRole("button", { name: "Locations" }).click();
  await page.getByRole("checkbox", { name: MANHATTAN }).click();
  await expect(page.getByRole("checkbox", { name: MANHATTAN })).toBeChecked();
  await page.keyboard.press("Escape");

  const note = page.getByTestId("busy-note");
  await expect(note).toHaveText(/busy, retrying in \d+ s/);
  await expect(note).toBeHidden({ timeout: 20_000 });
  await allSettled(page);
  expect(asked).toHaveLength(3);
  // Retry-After (1 s), then twice as long (2 s).
  expect(asked[1] - asked[0]).toBeGreaterThanOrEqual(900);
  expect(asked[2] - asked[1]).toBeGreaterThanOrEqual(1_900);
  await expect(page.locator('section[data-widget-id][data-state="error"]')).toHaveCount(0);
  const body = (await (await answered).json()) as { widgets: Record<string, { rows: Record<string, unknown>[] }> };
  expect(body.widgets.revenue_by_location.rows.map((r) => r.location)).toEqual([MANHATTAN]);
  expect(pageErrors).toEqual([]);
});
