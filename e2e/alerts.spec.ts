import { expect, test, type Locator, type Page } from "@playwright/test";

/*
 * Widget alerts (issue 45) end to end: "Alert me" on a KPI tile of the bundled sample, "test now" on the alert's page,
 * then the alert fires on its own cadence (when the data changes: a new alert is heard at the next minute's tick) and
 * its message, with the widget's picture, lands in the demo outbox. Globex's admin: no other spec replaces globex's
 * demo e-mail channel with a real server, so its outbox keeps what is sent.
 */

const SAMPLE = "/dashboards/custom/sample-sales";
const run = Date.now().toString(36);
const ALERT = `Revenue e2e ${run}`;

test.use({ storageState: "e2e/.auth/globex-admin.json", timezoneId: "UTC" });

/** Reloads the server-rendered page until `locator` shows: evaluations and deliveries are the in-process worker's, not the request's. */
async function reloadUntilVisible(page: Page, locator: Locator, timeout: number) {
  await expect(async () => {
    await page.reload();
    await expect(locator).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout });
}

test("an alert made from a KPI tile fires and its message, with the tile's picture, lands in the demo outbox", async ({ page }) => {
  test.setTimeout(240_000);
  await page.goto(SAMPLE);
  await expect(page.getByRole("heading", { level: 1, name: "Sales overview" })).toBeVisible();

  // "Alert me" on the Revenue tile, by keyboard: the button is reachable and named after the tile.
  const tile = page.locator('[data-widget-id="revenue_kpi"]');
  await expect(tile).toHaveAttribute("data-state", "ready");
  const alertMe = tile.getByRole("button", { name: "Alert me on Revenue" });
  await alertMe.focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog", { name: "Alert me: Revenue" });
  await expect(dialog).toBeVisible();
  await dialog.getByLabel("Name").fill(ALERT);
  await dialog.getByLabel("When the value").selectOption("above");
  await dialog.getByLabel("Threshold").fill("0");
  await dialog.getByLabel("Check").selectOption("on_data_change");
  await dialog.getByRole("button", { name: "Create alert" }).click();
  await expect(dialog.getByRole("status")).toContainText(`Alert "${ALERT}" created.`);
  await dialog.getByRole("link", { name: "Open the alert" }).click();

  // The alert's page: test now evaluates (met: revenue is above 0) and sends nothing.
  await expect(page.getByRole("heading", { level: 1, name: ALERT })).toBeVisible();
  await page.getByRole("button", { name: "Test now" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Tested" })).toBeVisible();
  const tested = page.getByRole("table").filter({ has: page.getByText("Test now: what each scope would find") });
  await expect(tested.locator('tr[data-outcome="met"]').first()).toBeVisible();

  // Heard at the next tick: it fires, its state says so, and its history chart is drawn.
  const alertUrl = page.url();
  await reloadUntilVisible(page, page.locator('[data-state="firing"]').first(), 150_000);
  await expect(page.getByTestId("alert-history-chart")).toBeVisible();

  // The message, as kept by the demo outbox: the value, the threshold, and the picture drawn by the report renderer.
  await page.goto("/admin/notifications");
  const row = page.getByRole("table", { name: "Demo outbox" }).locator("tr").filter({ hasText: `Alert "${ALERT}"` }).first();
  await reloadUntilVisible(page, row, 60_000);
  await expect(row).toContainText("Alert: Revenue $");
  await expect(row).toContainText("above $0.00");
  const picture = row.getByTestId("outbox-picture");
  await expect(picture).toBeVisible();
  await expect(picture).toHaveAttribute("alt", "Revenue");
  // The outbox loads its pictures lazily: brought on screen, as a reader scrolling to the row would.
  await picture.scrollIntoViewIfNeeded();
  await expect.poll(() => picture.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), { timeout: 30_000 }).toBeGreaterThan(100);
  const source = await picture.getAttribute("src");
  const png = await page.request.get(source!);
  expect(png.status()).toBe(200);
  expect(png.headers()["content-type"]).toBe("image/png");

  // The alert lists as firing on /alerts, reached from the main navigation.
  await page.getByRole("link", { name: "Alerts", exact: true }).first().click();
  const listed = page.getByTestId("alerts-list").locator("tr").filter({ hasText: ALERT });
  await expect(listed).toContainText("firing");
  await expect(listed.getByRole("link", { name: ALERT })).toHaveAttribute("href", new URL(alertUrl).pathname);
});
