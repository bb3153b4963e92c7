import crypto from "node:crypto";
import fs from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import PDFDocument from "pdfkit";
import { dropFiles } from "./drop-files";
import { sameOrigin } from "./same-origin";

/**
 * A random word no other run or seed contains, so searches find this run's passages. Random letters rather
 * than a timestamp: the local embedder hashes character trigrams, and timestamps of two runs share many.
 */
const marker = Array.from(crypto.randomBytes(10), (b) => String.fromCharCode(97 + (b % 26))).join("");
const run = `e2e-search-${marker}`;
/** Screenshots of the pages for people to look at; E2E_SCREENS moves them out of test-results, which each run empties. */
const SCREENS = process.env.E2E_SCREENS ?? "test-results/screens";

const FILLER = "The quarterly operations review covers staffing, logistics, supplier contracts and training schedules for every site.";

/** A text file long enough for many chunks (about 9,000 words), with one passage about the pumps in the middle. */
function manualText(): Buffer {
  const paragraphs: string[] = [];
  for (let i = 0; i < 80; i++) paragraphs.push(`${FILLER} Section ${i + 1} repeats the routine checks of warehouse ${i % 7}. ${FILLER} ${FILLER} ${FILLER} ${FILLER} ${FILLER} ${FILLER}`);
  paragraphs.splice(40, 0, `The ${marker} centrifugal pump maintenance interval is 750 operating hours; replace the impeller seals at every second interval.`);
  return Buffer.from(paragraphs.join("\n\n"), "utf8");
}

/** Filler of `words` words that shares no word with the questions below. */
const filler = (words: number, topic: string) => Array.from({ length: words }, (_, i) => (i % 12 === 11 ? `${topic}.` : ["stores", "open", "daily", "staff", "rotate", "shifts", "across", "regional", "teams", "under", "local", topic][i % 12])).join(" ");

/**
 * A three-page PDF of 700-850 words a page whose second page, in its
 * middle, states the refund policy: with 500-word chunks and 50 words of
 * overlap, that passage falls in a chunk starting on page 2.
 */
async function policyPdf(): Promise<Buffer> {
  const doc = new PDFDocument({ size: "A4", compress: true, margin: 36 });
  const chunks: Buffer[] = [];
  doc.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve) => doc.on("end", () => resolve()));
  doc.fontSize(8).text(`Customer handbook. ${filler(690, "introduction")}`);
  doc.addPage().text(`${filler(300, "service")} Refund policy ${marker}: customers may return unopened goods within 30 days for a full refund to the original payment card. ${filler(520, "service")}`);
  doc.addPage().text(`Regional contacts. ${filler(690, "escalation")}`);
  doc.end();
  await done;
  return Buffer.concat(chunks);
}

const row = (page: Page, filename: string) => page.locator(`[data-testid="document-row"][data-filename="${filename}"]`);
const TXT = `${run} pump manual.txt`;
const PDF = `${run} handbook.pdf`;

test.describe.configure({ mode: "serial" });

/** Turns acme's indexing on upload on or off (organization settings). */
async function indexOnUpload(context: { request: Page["request"] }, on: boolean) {
  const current = await (await context.request.get("/api/v1/organization/settings")).json();
  const res = await context.request.put("/api/v1/organization/settings", { headers: sameOrigin(), data: { image_origins: current.image_origins ?? [], index_on_upload: on } });
  expect(res.status()).toBe(200);
}

// These tests rank passages against each other: they start from an organization holding none but
// their own (the demo documents and other specs' files would compete for the first place). The
// first ones index from the page's buttons, so uploads do not queue indexing by themselves until
// the test of that.
test.beforeAll(async ({ browser }) => {
  const context = await browser.newContext({ storageState: "e2e/.auth/admin.json" });
  const list = await (await context.request.get("/api/v1/documents?limit=100")).json();
  for (const doc of list.items ?? []) expect((await context.request.delete(`/api/v1/documents/${doc.id}`, { headers: sameOrigin() })).status()).toBe(204);
  await indexOnUpload(context, false);
  await context.close();
});

// A failed run must not leave passages behind that compete with the next run's.
test.afterAll(async ({ browser }) => {
  const context = await browser.newContext({ storageState: "e2e/.auth/admin.json" });
  const list = await (await context.request.get(`/api/v1/documents?q=${encodeURIComponent(run)}`)).json();
  for (const doc of list.items ?? []) await context.request.delete(`/api/v1/documents/${doc.id}`, { headers: sameOrigin() });
  await indexOnUpload(context, true);
  await context.close();
});

test("an admin indexes a txt and a pdf from the page, watches the progress, and searches them", async ({ page }) => {
  fs.mkdirSync(SCREENS, { recursive: true });
  await page.goto("/documents");
  await expect(page.getByTestId("search-panel")).toBeVisible();
  await dropFiles(page, [
    { name: TXT, type: "text/plain", data: manualText() },
    { name: PDF, type: "application/pdf", data: await policyPdf() },
  ]);
  for (const name of [TXT, PDF]) await expect(row(page, name).getByTestId("status-chip")).toHaveText("uploaded");

  // Every progress value the page saw while indexing, read from the record it polls.
  const progress: { done: number; total: number }[] = [];
  page.on("response", async (response) => {
    if (response.request().method() !== "GET" || !/\/api\/v1\/documents\/doc_[^/]+$/.test(new URL(response.url()).pathname)) return;
    const record = await response.json().catch(() => null);
    if (record?.status === "indexing") progress.push({ done: record.index_progress_done, total: record.index_progress_total });
  });

  const txtRow = row(page, TXT);
  await txtRow.getByRole("button", { name: "Index", exact: true }).click();
  // The click queues a job: the row says so at once (queued, then progress while it runs; a fast run may skip straight to done).
  await expect(txtRow.getByTestId("index-queued").or(txtRow.getByTestId("index-progress")).or(txtRow.getByTestId("chunk-count")).first()).toBeVisible();
  await expect(txtRow.getByTestId("status-chip")).toHaveText("indexed", { timeout: 60_000 });
  await expect(txtRow.getByTestId("index-progress")).toHaveCount(0);
  const chunks = Number((await txtRow.getByTestId("chunk-count").textContent())?.match(/\d+/)?.[0]);
  expect(chunks).toBeGreaterThan(10);
  const record = await (await page.request.get(`/api/v1/documents/${await txtRow.getAttribute("data-document-id")}`)).json();
  expect(record.chunk_count).toBe(chunks);
  // Progress counts up to the total and never past it.
  for (const p of progress) expect(p.done).toBeLessThanOrEqual(p.total);
  await expect(txtRow.getByRole("button", { name: "Re-index" })).toBeVisible();
  await expect(txtRow.getByRole("button", { name: "Remove index" })).toBeVisible();

  const pdfRow = row(page, PDF);
  await pdfRow.getByRole("button", { name: "Index", exact: true }).click();
  await expect(pdfRow.getByTestId("status-chip")).toHaveText("indexed", { timeout: 60_000 });
  await expect(pdfRow.getByTestId("chunk-count")).toHaveText(/^\d+ chunks?$/);

  // Search finds the pump passage, with a score, its document and the query words marked.
  const panel = page.getByTestId("search-panel");
  await panel.getByTestId("search-input").fill(`${marker} pump maintenance interval`);
  await panel.getByRole("button", { name: "Search", exact: true }).click();
  const first = panel.getByTestId("search-result").first();
  await expect(first).toContainText("750 operating hours");
  await expect(first).toContainText(`${run} pump manual`);
  await expect(first.getByTestId("search-score")).toHaveText(/^\d+(\.\d)?%$/);
  await expect(first.locator("mark").filter({ hasText: marker }).first()).toBeVisible();
  await expect(first.getByRole("button", { name: `Open ${TXT}` })).toBeVisible();

  // Hybrid mode finds the pdf's refund page, with its page number.
  await panel.getByText("Hybrid", { exact: true }).click();
  await panel.getByTestId("search-input").fill(`${marker} refund unopened goods`);
  await panel.getByRole("button", { name: "Search", exact: true }).click();
  const refund = panel.getByTestId("search-result").first();
  await expect(refund).toContainText("30 days");
  await expect(refund).toContainText("page 2");
  await page.screenshot({ path: `${SCREENS}/documents.png`, fullPage: true });
});

test("chat answers with the retrieved passages and citations that open the documents", async ({ page }) => {
  await page.goto("/chat");
  await expect(page.getByRole("heading", { level: 1, name: "Chat" })).toBeVisible();
  const input = page.getByTestId("chat-input");
  await input.fill(`What is the ${marker} refund policy for unopened goods?`);
  await input.press("Enter");
  const answer = page.getByTestId("chat-answer").last();
  await expect(page.getByTestId("chat-turn").last()).toHaveAttribute("data-state", "done");
  // The e2e server has no CHAT_MODEL_CONFIG: the answer is the passages, labelled as such.
  await expect(answer).toContainText("Retrieved passages (no chat model is configured)");
  await expect(answer).toContainText("30 days");

  const citations = answer.getByTestId("citation");
  await expect(citations.first()).toBeVisible();
  const pdfCitation = answer.getByRole("link", { name: new RegExp(`^Source \\d+: ${run} handbook, pages? 2(–\\d+)?$`) }).first();
  await expect(pdfCitation).toHaveAttribute("href", /\/api\/v1\/documents\/signed-file\?.*#page=2$/);
  // The link serves the document itself.
  const href = (await pdfCitation.getAttribute("href"))!;
  const file = await page.request.get(href.replace(/#.*$/, ""));
  expect(file.status()).toBe(200);
  expect((await file.body()).subarray(0, 5).toString()).toBe("%PDF-");
  await expect(answer.getByTestId("chat-source").first()).toContainText(/page 2|pages? \d/);
  await page.screenshot({ path: `${SCREENS}/chat.png`, fullPage: true });

  // Readable on a phone.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${SCREENS}/chat-phone.png`, fullPage: false });
});

test("globex's search and chat find nothing of acme's documents", async ({ browser }) => {
  const globex = await browser.newContext({ storageState: "e2e/.auth/globex-admin.json" });
  const page = await globex.newPage();
  await page.goto("/documents");
  const panel = page.getByTestId("search-panel");
  await panel.getByTestId("search-input").fill(`${marker} pump maintenance interval`);
  await panel.getByRole("button", { name: "Search", exact: true }).click();
  await expect(panel.getByTestId("search-empty").or(panel.getByTestId("search-results"))).toBeVisible();
  await expect(panel.getByTestId("search-result").filter({ hasText: marker })).toHaveCount(0);
  await expect(page.getByText(run)).toHaveCount(0);

  const api = await (await page.request.post("/api/v1/documents/search", { headers: sameOrigin(), data: { query: `${marker} refund`, top_k: 100 } })).json();
  expect(api.results.filter((r: { text: string }) => r.text.includes(marker))).toEqual([]);

  await page.goto("/chat");
  await page.getByTestId("chat-input").fill(`What is the ${marker} refund policy?`);
  await page.getByTestId("chat-input").press("Enter");
  await expect(page.getByTestId("chat-turn").last()).toHaveAttribute("data-state", "done");
  await expect(page.getByTestId("chat-answer").last()).not.toContainText(marker);
  await globex.close();
});

test("an admin removes an index and deletes the documents", async ({ page }) => {
  await page.goto("/documents");
  page.on("dialog", (dialog) => void dialog.accept());
  const txtRow = row(page, TXT);
  await txtRow.getByRole("button", { name: "Remove index" }).click();
  await expect(txtRow.getByTestId("status-chip")).toHaveText("uploaded");
  await expect(txtRow.getByRole("button", { name: "Index", exact: true })).toBeVisible();
  for (const name of [TXT, PDF]) {
    await row(page, name).getByRole("button", { name: "Delete" }).click();
    await expect(row(page, name)).toHaveCount(0);
  }
});

test("an uploaded file is indexed by itself, with no click on Index", async ({ page }) => {
  await indexOnUpload(page, true);
  const name = `${run} auto.txt`;
  await page.goto("/documents");
  page.on("dialog", (dialog) => void dialog.accept());
  await dropFiles(page, [{ name, type: "text/plain", data: Buffer.from(`The ${marker} forklift inspection happens every Monday before the first shift.`, "utf8") }]);
  await expect(row(page, name).getByTestId("status-chip")).toHaveText("indexed", { timeout: 60_000 });
  await expect(row(page, name).getByTestId("chunk-count")).toHaveText(/^\d+ chunks?$/);
  await row(page, name).getByRole("button", { name: "Delete" }).click();
  await expect(row(page, name)).toHaveCount(0);
});
