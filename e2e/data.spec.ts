import { expect, test, type Page } from "@playwright/test";
import { sameOrigin } from "./same-origin";

/*
 * Issue 42's end-to-end path: an admin uploads a CSV on /data, reviews the inferred types, renames a
 * column and changes a type, loads it; a bad value is refused naming its row, column and value with
 * nothing kept; then a widget over the table is built in the manifest editor (its names checked and
 * completed as typed) and shows the table's numbers; a drop is refused while the dashboard reads it.
 */

/** Names unique to this run, so a reused e2e data folder never confuses tables. */
const run = Date.now().toString(36);
const TABLE = `spend_${run}`;

/** Spend per channel: search 350, social 100, email 30.5 (the widget's sums). */
const CSV = ["Day,Channel,Spend (USD),Store No", "2026-01-01,search,100,7", "2026-01-01,social,40,7", "2026-01-02,search,250,8", "2026-01-02,social,60,8", "2026-01-02,email,30.5,9", ""].join("\n");

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" && !message.location().url.endsWith("/favicon.ico")) errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  return errors;
}

async function chooseFile(page: Page, name: string, text: string) {
  await page.getByTestId("data-file-input").setInputFiles({ name, mimeType: "text/csv", buffer: Buffer.from(text) });
}

const column = (page: Page, index: number) => page.getByTestId("preview-column").nth(index);

test.describe.configure({ mode: "serial" });

test("an admin uploads a CSV, renames a column and changes a type, and loads it; the list shows the table", async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto("/data");
  await expect(page.getByRole("heading", { level: 1, name: "Data" })).toBeVisible();

  await chooseFile(page, `${TABLE}.csv`, CSV);
  await expect(page.getByTestId("upload-review")).toBeVisible();
  await expect(page.getByTestId("upload-review")).toContainText("5 rows");
  // Types inferred over the whole file: a date, text, a number with a fraction in its last row, an integer.
  await expect(column(page, 0).getByRole("combobox")).toHaveValue("date");
  await expect(column(page, 1).getByRole("combobox")).toHaveValue("text");
  await expect(column(page, 2).getByRole("combobox")).toHaveValue("numeric");
  await expect(column(page, 3).getByRole("combobox")).toHaveValue("integer");
  // The header made into names; the admin renames one and keeps a store number as text.
  await expect(column(page, 2).getByRole("textbox")).toHaveValue("spend_usd");
  await column(page, 2).getByRole("textbox").fill("spend");
  await column(page, 3).getByRole("combobox").selectOption("text");
  await expect(page.getByTestId("table-name")).toHaveValue(TABLE);
  await expect(page.getByTestId("load-mode")).toHaveValue("create");

  await page.getByTestId("load-button").click();
  await expect(page.getByTestId("load-report")).toContainText(`Loaded 5 rows into ${TABLE}`);
  const row = page.locator(`[data-testid="data-table-row"][data-table="${TABLE}"]`);
  await expect(row).toContainText("spend");
  await expect(row).toContainText("numeric");
  await expect(row).toContainText("store_no");
  await expect(row.locator("td").nth(1)).toHaveText("5");

  const listed = (await (await page.request.get("/api/v1/data/tables")).json()) as { items: { name: string; row_count: number; columns: { name: string; type: string }[] }[] };
  const table = listed.items.find((t) => t.name === TABLE);
  expect(table?.row_count).toBe(5);
  expect(table?.columns.map((c) => `${c.name}:${c.type}`)).toEqual(["day:date", "channel:text", "spend:numeric", "store_no:text"]);
  expect(errors).toEqual([]);
});

test("a value that does not fit its column is refused naming its row, column and value, and nothing is kept", async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto("/data");
  const bad = `bad_${run}`;
  await chooseFile(page, `${bad}.csv`, CSV);
  await expect(page.getByTestId("upload-review")).toBeVisible();
  // Spend as an integer: the fifth row's 30.5 does not fit.
  await column(page, 2).getByRole("combobox").selectOption("integer");
  await page.getByTestId("load-button").click();
  const error = page.getByTestId("data-error");
  await expect(error).toContainText("Nothing was loaded");
  await expect(page.getByTestId("bad-rows")).toContainText("Row 5");
  await expect(page.getByTestId("bad-rows")).toContainText("spend_usd");
  await expect(page.getByTestId("bad-rows")).toContainText("30.5");
  await expect(page.locator(`[data-testid="data-table-row"][data-table="${bad}"]`)).toHaveCount(0);
  const listed = (await (await page.request.get("/api/v1/data/tables")).json()) as { items: { name: string }[] };
  expect(listed.items.map((t) => t.name)).not.toContain(bad);
  // The refused load's own 422 is the browser's one logged line; nothing else may fail.
  expect(errors.filter((e) => !e.includes("status of 422"))).toEqual([]);
});

test("a widget over the table is built in the editor, its names checked and completed, and shows the table's numbers", async ({ page }) => {
  test.setTimeout(240_000);
  const errors = watchErrors(page);
  const slug = `spend-${run}`;
  const start = `version: "1.0"
kind: dashboard
metadata: { id: spend, name: Spend ${run} }
spec:
  tabs: [{ id: main, name: Main, widgets: [note] }]
---
version: "1.0"
kind: widget
metadata: { id: note, name: Note }
spec:
  component: markdown
  layout: { x: 0, y: 0, w: 12, h: 1 }
  display: { markdown: { content: "Spend" } }
`;
  const widgetHead = `---
version: "1.0"
kind: widget
metadata: { id: by_channel, name: Spend by channel }
spec:
  component: table
  layout: { x: 0, y: 1, w: 12, h: 4 }
  data: { kind: sql, query: "SELECT s.channel, sum(s.spend) AS spend FROM `;
  const created = await page.request.post("/api/v1/custom-dashboards", { headers: sameOrigin(), data: { name: `Spend ${run}`, slug, spec_yaml: start } });
  expect(created.status()).toBe(201);

  await page.goto(`/dashboards/custom/${slug}/edit`);
  await expect(page.getByTestId("manifest-valid")).toBeVisible();
  const content = page.locator(".cm-content");
  await content.click();
  await page.keyboard.press("Control+End");
  // The table's name completes after FROM.
  await page.keyboard.insertText(widgetHead);
  await page.keyboard.type(TABLE.slice(0, 7));
  const completion = page.locator(".cm-tooltip-autocomplete");
  await expect(completion).toContainText(TABLE);
  await page.keyboard.press("Escape");
  await page.keyboard.type(TABLE.slice(7));
  // A column the table lacks is reported at its line and column.
  await page.keyboard.insertText(` s GROUP BY s.channel, s.spent ORDER BY s.channel" }\n`);
  await expect(page.getByTestId("manifest-problems")).toContainText(`table '${TABLE}' has no column 'spent'`);
  await expect(page.getByTestId("manifest-problems")).toContainText(/line 21:\d+/);

  // Fix the line, wire the widget into the tab, and save.
  const fixed = `${start.replace("widgets: [note]", "widgets: [note, by_channel]")}${widgetHead}${TABLE} s GROUP BY s.channel ORDER BY s.channel" }\n`;
  await content.click();
  await page.keyboard.press("Control+A");
  await page.keyboard.insertText(fixed);
  await expect(page.getByTestId("manifest-valid")).toContainText("2 widgets");
  await page.getByRole("button", { name: "Save draft" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Draft saved" })).toBeVisible();

  const widget = page.locator('section[data-widget-id="by_channel"]');
  // A table new since the embedded analytics copy was made reaches it with one full refresh of the copy (7-9 s on a
  // quiet machine, 25 s seen at load 18; docs/data.md): a bound that holds under CI's load, not a claim of speed.
  await expect(widget).toContainText("search", { timeout: 90_000 });
  await expect(widget).toContainText("350");
  await expect(widget).toContainText("100");
  await expect(widget).toContainText("30.5");

  // Published, the dashboard reads the table: /data lists it and a drop is refused, naming it.
  await page.getByRole("button", { name: "Publish" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Published version" })).toBeVisible();
  await page.goto("/data");
  const row = page.locator(`[data-testid="data-table-row"][data-table="${TABLE}"]`);
  await expect(row).toContainText(`Spend ${run}`);
  page.once("dialog", (dialog) => void dialog.accept());
  await row.getByRole("button", { name: `Drop ${TABLE}` }).click();
  await expect(row.getByTestId("drop-refused")).toContainText(`Spend ${run}`);
  await expect(row).toBeVisible();
  // The refused drop's own 409 is logged by the browser itself ("Failed to load resource", for any answer of 400 or
  // more); the page handles it (the readers listed). Nothing else may fail.
  expect(errors.filter((e) => !e.includes("status of 409"))).toEqual([]);
});

test("on a phone the review fits the screen: the preview scrolls inside its box, the form stacks", async ({ browser }) => {
  const context = await browser.newContext({ storageState: "e2e/.auth/admin.json", viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto("/data");
  await chooseFile(page, `phone_${run}.csv`, CSV);
  await expect(page.getByTestId("upload-review")).toBeVisible();
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width).toBeLessThanOrEqual(390);
  // The load button is reachable and whole within the screen's width.
  await page.getByTestId("load-button").scrollIntoViewIfNeeded();
  const box = (await page.getByTestId("load-button").boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(390);
  await context.close();
});
