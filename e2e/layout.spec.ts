import { expect, test, type Locator, type Page } from "@playwright/test";
import { sameOrigin } from "./same-origin";

/*
 * Layout mode (issue 44 §2): in the editor, tiles move by keyboard (arrows move, shift+arrows resize, announced) and
 * by dragging; each move is written into the YAML at once and is one step of the editor's undo history; the saved
 * draft differs from the sample only in the moved widgets' `layout:` lines, byte for byte everywhere else.
 */

// Its own slug each run: a second run on the same data folder would find the first one's.
const SLUG = `layout-e2e-${Date.now().toString(36)}`;

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" && !message.location().url.endsWith("/favicon.ico")) errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  return errors;
}

async function boxOf(tile: Locator): Promise<{ x: number; y: number; w: number; h: number }> {
  const [x, y, w, h] = ((await tile.getAttribute("data-box")) ?? "").split(",").map(Number);
  return { x, y, w, h };
}

test("tiles move and resize by keyboard and by drag, undo and redo follow, and only layout lines change", async ({ page }) => {
  const errors = watchErrors(page);
  const headers = sameOrigin();
  const sample = await (await page.request.get("/api/v1/custom-dashboards/sample-sales")).json();
  const created = await page.request.post("/api/v1/custom-dashboards", { headers, data: { name: "Layout e2e", slug: SLUG, spec_yaml: sample.spec_yaml } });
  expect(created.status()).toBe(201);
  const id = (await created.json()).id;

  await page.goto(`/dashboards/custom/${SLUG}/edit`);
  await page.getByTestId("arrange-toggle").click();
  await expect(page.getByTestId("layout-mode")).toBeVisible();
  // Each applied edit is announced by the editor; layout mode's own region says why a key did nothing.
  const announcement = page.getByTestId("edit-announcement");

  // Keyboard: one column right, then one row taller.
  const revenue = page.getByTestId("layout-tile-revenue_kpi");
  const start = await boxOf(revenue);
  await revenue.focus();
  // The sample's revenue KPI starts in the first column: Left is refused, and says so.
  expect(start.x).toBe(0);
  await page.keyboard.press("ArrowLeft");
  await expect(page.getByTestId("layout-announcement")).toContainText("Revenue cannot move further that way");
  await page.keyboard.press("ArrowRight");
  await expect(revenue).toHaveAttribute("data-box", `${start.x + 1},${start.y},${start.w},${start.h}`);
  await expect(announcement).toContainText(`Moved Revenue: column ${start.x + 2}`);
  await expect(revenue).toBeFocused();
  await page.keyboard.press("Shift+ArrowDown");
  await expect(revenue).toHaveAttribute("data-box", `${start.x + 1},${start.y},${start.w},${start.h + 1}`);
  await expect(announcement).toContainText(`${start.h + 1} rows high`);

  // Undo from the tile (Ctrl+Z), redo with the button: the YAML's history is the layout's.
  await page.keyboard.press("Control+z");
  await expect(revenue).toHaveAttribute("data-box", `${start.x + 1},${start.y},${start.w},${start.h}`);
  await page.getByTestId("manifest-redo").click();
  await expect(revenue).toHaveAttribute("data-box", `${start.x + 1},${start.y},${start.w},${start.h + 1}`);

  // Drag: the trend chart, taken by its middle, dropped well to the right and down by a row or more.
  const trend = page.getByTestId("layout-tile-revenue_trend");
  const before = await boxOf(trend);
  // The mouse reaches only what is on screen: the trend sits below the first rows.
  await trend.scrollIntoViewIfNeeded();
  const area = (await trend.boundingBox())!;
  await page.mouse.move(area.x + area.width / 2, area.y + 20);
  await page.mouse.down();
  await page.mouse.move(area.x + area.width / 2 + 60, area.y + 60, { steps: 6 });
  await page.mouse.move(area.x + area.width / 2 + 120, area.y + 140, { steps: 6 });
  await page.mouse.up();
  await expect.poll(async () => JSON.stringify(await boxOf(trend))).not.toBe(JSON.stringify(before));
  await expect(announcement).toContainText("Moved Revenue by day");

  await page.getByRole("button", { name: "Save draft" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Draft saved" })).toBeVisible();
  const draft = (await (await page.request.get(`/api/v1/custom-dashboards/${id}`)).json()).spec_yaml as string;
  const was = sample.spec_yaml.split("\n") as string[];
  const now = draft.split("\n");
  expect(now.length).toBe(was.length);
  const changed = now.map((line, i) => [was[i], line]).filter(([a, b]) => a !== b);
  expect(changed.length).toBeGreaterThanOrEqual(2);
  for (const [a, b] of changed) {
    expect(a).toMatch(/^\s*layout: \{/);
    expect(b).toMatch(/^\s*layout: \{/);
  }
  expect(errors).toEqual([]);
});
