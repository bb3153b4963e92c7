import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { expect, test } from "@playwright/test";

/** The bundled sample, loaded at the demo start (lib/dashboards/demo.ts). */
const SAMPLE = "/dashboards/custom/sample-sales";

test("Download PDF on the viewer downloads the dashboard as shown: its title, its filters, its figures", async ({ page }) => {
  // A location chosen in the URL, as the filter panel writes it: the report shows the same selection.
  await page.goto(`${SAMPLE}?f.location_filter=${encodeURIComponent(JSON.stringify(["loc_acme_bos"]))}`);
  await expect(page.getByRole("heading", { level: 1, name: "Sales overview" })).toBeVisible();
  const revenue = page.locator('section[data-widget-id="revenue_kpi"] output');
  await expect(revenue).not.toHaveText("–");
  const shown = (await revenue.textContent())?.trim() ?? "";
  expect(shown).toMatch(/^\$[\d,]+(\.\d+)?$/);

  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("download-pdf").click()]);
  expect(download.suggestedFilename()).toMatch(/^sample-sales-\d{4}-\d{2}-\d{2}\.pdf$/);
  const file = await download.path();
  expect(fs.readFileSync(file).subarray(0, 5).toString("latin1")).toBe("%PDF-");
  const text = execFileSync("pdftotext", [file, "-"], { encoding: "utf8" }).replace(/\s+/g, " ");
  expect(text).toContain("Sales overview");
  expect(text).toContain("Locations: Boston Back Bay");
  // The tile's figure, exactly as the viewer shows it.
  expect(text).toContain(shown);
  expect(text).toContain("Revenue by location");
});

test("Download PNG downloads an image of the tab on screen", async ({ page }) => {
  await page.goto(`${SAMPLE}?tab=analysis`);
  await expect(page.getByRole("heading", { level: 1, name: "Sales overview" })).toBeVisible();
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("download-png").click()]);
  expect(download.suggestedFilename()).toMatch(/\.png$/);
  const bytes = fs.readFileSync(await download.path());
  expect(bytes.subarray(1, 4).toString("latin1")).toBe("PNG");
  expect(bytes.length).toBeGreaterThan(20_000);
});
