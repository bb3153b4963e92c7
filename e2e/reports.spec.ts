import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { expect, test } from "@playwright/test";
import { sameOrigin } from "./same-origin";

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

test("an embed offers the downloads its manifest allows, and its PDF is what the embed shows", async ({ page, browser }) => {
  // A copy of the sample that offers PDF downloads on pages without a sign-in (platform.downloads), published and embedded.
  const slug = `downloads-${Date.now().toString(36)}`;
  const sample = await page.request.get("/api/v1/custom-dashboards/sample-sales");
  const yaml = ((await sample.json()) as { spec_yaml: string }).spec_yaml.replace(/^( {2}allow_embed: .*)$/m, "  allow_embed: true\n  downloads: { pdf: true }");
  const created = await page.request.post("/api/v1/custom-dashboards", { headers: sameOrigin(), data: { name: "Downloadable sales", slug, spec_yaml: yaml } });
  expect(created.status()).toBe(201);
  expect((await page.request.post(`/api/v1/custom-dashboards/${slug}/publish`, { headers: sameOrigin() })).status()).toBe(200);
  const embed = await page.request.post(`/api/v1/custom-dashboards/${slug}/embed`, { headers: sameOrigin(), data: { expires_in: 3600, locked_filters: { location_filter: ["loc_acme_bos"] } } });
  expect(embed.status()).toBe(201);
  const { url } = (await embed.json()) as { url: string };

  // A visitor without a session, as in a partner's iframe.
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  const visitor = await context.newPage();
  await visitor.goto(new URL(url, "http://x").pathname);
  await expect(visitor.getByTestId("embed")).toBeVisible();
  await expect(visitor.getByTestId("download-png")).toHaveCount(0);
  const [download] = await Promise.all([visitor.waitForEvent("download"), visitor.getByTestId("download-pdf").click()]);
  const text = execFileSync("pdftotext", [await download.path(), "-"], { encoding: "utf8" }).replace(/\s+/g, " ");
  expect(text).toContain("Downloadable sales");
  // The grant's locked location, as the embed shows it.
  expect(text).toContain("Locations: Boston Back Bay");
  await context.close();
});
