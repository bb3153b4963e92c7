import crypto from "node:crypto";
import fs from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { dropFiles, type DroppedFile } from "./drop-files";
import { csvFile, docxFile, pdfFile, txtFile } from "../test/support/document-files";

const sha256 = (b: Buffer) => crypto.createHash("sha256").update(b).digest("hex");

/** Names unique to this run, so a reused e2e data folder never confuses rows. */
const run = `e2e-${Date.now().toString(36)}`;

async function fixtures(): Promise<DroppedFile[]> {
  return [
    { name: `${run} report.pdf`, type: "application/pdf", data: await pdfFile() },
    { name: `${run} policy.docx`, type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", data: await docxFile() },
    { name: `${run} revenue.csv`, type: "text/csv", data: csvFile() },
    { name: `${run} notes.txt`, type: "text/plain", data: txtFile() },
  ];
}

const row = (page: Page, filename: string) => page.locator(`[data-testid="document-row"][data-filename="${filename}"]`);

test.describe.configure({ mode: "serial" });

test("an admin drops a PDF, a DOCX, a CSV and a TXT, sees them land and downloads each back byte-identical", async ({ page, browser }) => {
  const files = await fixtures();
  await page.goto("/documents");
  await expect(page.getByRole("heading", { level: 1, name: "Documents" })).toBeVisible();

  await dropFiles(page, files);
  const items = page.getByTestId("upload-item");
  await expect(items).toHaveCount(4);
  for (const f of files) {
    await expect(items.filter({ hasText: f.name })).toHaveAttribute("data-state", "done");
    await expect(row(page, f.name)).toBeVisible();
    await expect(row(page, f.name).getByTestId("status-chip")).toHaveText(/uploaded|indexing|indexed/);
  }

  const ids: string[] = [];
  for (const f of files) {
    const target = row(page, f.name);
    ids.push((await target.getAttribute("data-document-id"))!);
    const [download] = await Promise.all([page.waitForEvent("download"), target.getByRole("button", { name: "Download" }).click()]);
    expect(download.suggestedFilename()).toBe(f.name);
    const saved = fs.readFileSync((await download.path())!);
    expect(sha256(saved)).toBe(sha256(f.data));
  }

  // The API reports the same checksums the browser got.
  for (const [i, id] of ids.entries()) {
    const record = await (await page.request.get(`/api/v1/documents/${id}`)).json();
    expect(record.checksum_sha256).toBe(sha256(files[i].data));
  }

  // globex can neither list nor download acme's documents.
  const globex = await browser.newContext({ storageState: "e2e/.auth/globex-admin.json" });
  const listed = await (await globex.request.get(`/api/v1/documents?q=${run}`)).json();
  expect(listed).toMatchObject({ items: [], total: 0 });
  for (const id of ids) {
    expect((await globex.request.get(`/api/v1/documents/${id}`)).status()).toBe(404);
    expect((await globex.request.get(`/api/v1/documents/${id}/download`)).status()).toBe(404);
  }
  const globexPage = await globex.newPage();
  await globexPage.goto("/documents");
  await expect(globexPage.getByTestId("documents-table").or(globexPage.getByText("No documents yet"))).toBeVisible();
  await expect(globexPage.getByText(run)).toHaveCount(0);
  await globex.close();
});

test("files of other types or over the limit are refused before sending", async ({ page }) => {
  await page.goto("/documents");
  let uploadRequests = 0;
  page.on("request", (r) => {
    if (r.method() === "POST" && r.url().includes("/api/v1/documents")) uploadRequests++;
  });
  await dropFiles(page, [{ name: `${run} tool.exe`, type: "application/octet-stream", data: Buffer.from("MZ") }, { name: `${run} empty.txt`, type: "text/plain", data: Buffer.alloc(0) }]);
  await expect(page.getByTestId("upload-item").filter({ hasText: "tool.exe" }).getByRole("alert")).toHaveText(/\.exe cannot be uploaded/);
  await expect(page.getByTestId("upload-item").filter({ hasText: "empty.txt" }).getByRole("alert")).toHaveText(/empty/);
  expect(uploadRequests).toBe(0);
});

test("an analyst sees the list read-only", async ({ browser }) => {
  const context = await browser.newContext({ storageState: "e2e/.auth/analyst.json" });
  const page = await context.newPage();
  await page.goto("/documents");
  await expect(page.locator(`[data-testid="document-row"][data-filename="${run} notes.txt"]`)).toBeVisible();
  await expect(page.getByTestId("document-dropzone")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Delete" })).toHaveCount(0);
  await context.close();
});

test("with no embedding provider configured, the search panel names the offline embedder and the variable to set (SPEC §7.3)", async ({ page }) => {
  await page.goto("/documents");
  const notice = page.getByTestId("search-panel").getByTestId("embedding-offline-notice");
  await expect(notice).toContainText("no embedding provider configured: offline word-matching embedder in use");
  await expect(notice).toContainText("EMBEDDING_PROVIDER_CONFIG");
  // Search still works: the offline embedder is the zero-setup default.
  await expect(page.getByTestId("search-input")).toBeEnabled();
});

test("an admin deletes a document; it leaves the list", async ({ page }) => {
  await page.goto("/documents");
  page.on("dialog", (dialog) => void dialog.accept());
  for (const suffix of ["report.pdf", "policy.docx", "revenue.csv", "notes.txt"]) {
    const target = row(page, `${run} ${suffix}`);
    await target.getByRole("button", { name: "Delete" }).click();
    await expect(target).toHaveCount(0);
  }
});
