import { expect, test, type Page } from "@playwright/test";
import { sameOrigin } from "./same-origin";

/*
 * The widget builder (issue 44 §1): on a copy of the sample, an analyst adds a bar chart by picking a dataset,
 * a dimension and a metric; the builder writes the widget into the YAML, the preview lays it out, and once the
 * draft is saved the chart draws real rows. On a phone width the builder's fields stack and stay usable.
 */

const SLUG = `builder-e2e-${Date.now().toString(36)}`;

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  return errors;
}

async function copyOfSample(page: Page, slug: string): Promise<void> {
  const sample = await (await page.request.get("/api/v1/custom-dashboards/sample-sales")).json();
  const created = await page.request.post("/api/v1/custom-dashboards", { headers: sameOrigin(), data: { name: "Builder e2e", slug, spec_yaml: sample.spec_yaml } });
  expect(created.status()).toBe(201);
}

test("adds a bar chart by picking fields and sees it drawn in the preview", async ({ page }) => {
  const errors = watchErrors(page);
  await copyOfSample(page, SLUG);
  await page.goto(`/dashboards/custom/${SLUG}/edit`);
  const builder = page.getByRole("region", { name: "Widget builder" });
  await builder.getByRole("button", { name: "Add a widget" }).click();
  await builder.getByLabel("Title").fill("Orders by channel");
  await builder.getByLabel("Kind").selectOption("bar");
  await expect(builder.getByLabel("Tab", { exact: true })).toHaveValue("overview");
  await builder.getByLabel("Dataset or table").selectOption("sales");
  await builder.getByRole("group", { name: "Dimensions" }).getByLabel("channel").check();
  await builder.getByRole("group", { name: "Metrics" }).getByLabel("orders").check();
  await expect(builder.getByTestId("builder-written")).toContainText("chart");

  // The manifest with the new widget is valid and not saved yet.
  await expect(page.getByTestId("manifest-valid")).toContainText("unsaved changes");

  await page.getByRole("button", { name: "Save draft" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Draft saved" })).toBeVisible();
  // The saved draft holds the widget as the builder wrote it, after the sample's own text.
  const saved = await (await page.request.get(`/api/v1/custom-dashboards/${SLUG}`)).json();
  expect(saved.spec_yaml).toContain("metadata: { id: chart, name: Orders by channel }");
  expect(saved.spec_yaml).toContain("data: { kind: dataset, dataset: sales, columns: [channel, orders], mappings: { x: channel, y: orders } }");
  const card = page.getByRole("region", { name: "Live preview" }).locator('[data-widget-id="chart"]');
  await expect(card).toHaveAttribute("data-state", "ready", { timeout: 30_000 });
  await expect(card).toContainText("Orders by channel");
  // Charts start when they come near the viewport (docs/dashboards-viewer.md): the new one is at the preview's end.
  await card.scrollIntoViewIfNeeded();
  await expect(card.locator("canvas, svg").first()).toBeVisible();
  expect(errors).toEqual([]);
});

test("on a phone width the builder's fields fit the screen", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await copyOfSample(page, `${SLUG}-phone`);
  await page.goto(`/dashboards/custom/${SLUG}-phone/edit`);
  const builder = page.getByRole("region", { name: "Widget builder" });
  await builder.getByRole("button", { name: "Add a widget" }).click();
  for (const label of ["Title", "Kind", "Dataset or table"]) {
    const box = await builder.getByLabel(label).boundingBox();
    expect(box, label).not.toBeNull();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width, label).toBeLessThanOrEqual(390);
  }
});
