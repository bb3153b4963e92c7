import { execFileSync } from "node:child_process";
import { expect, test } from "@playwright/test";
import { startSmtp, type ReceivedMail } from "../test/support/notification-servers";
import { sameOrigin } from "./same-origin";

/** The bundled sample, loaded at the demo start (lib/dashboards/demo.ts). */
const SAMPLE = "/dashboards/custom/sample-sales";
const run = Date.now().toString(36);

let smtp: Awaited<ReturnType<typeof startSmtp>>;

test.beforeAll(async () => {
  smtp = await startSmtp();
});

test.afterAll(async () => {
  await smtp?.close();
});

/** The PDF attachments of a raw MIME message (nodemailer's multipart/mixed, base64 parts). */
function pdfAttachments(mail: ReceivedMail): Buffer[] {
  const boundary = /boundary="?([^"\r\n;]+)"?/i.exec(mail.raw)?.[1];
  if (!boundary) return [];
  return mail.raw
    .split(`--${boundary}`)
    .map((part) => part.split(/\r?\n\r?\n/))
    .filter(([headers]) => /content-type:\s*application\/pdf/i.test(headers ?? ""))
    .map(([, ...body]) => Buffer.from(body.join("").replace(/\s+/g, ""), "base64"));
}

test("a report scheduled from the viewer and sent now arrives by e-mail with its PDF, in the recipient's scope", async ({ page }) => {
  // The organization's e-mail goes to this run's SMTP server (the in-process worker sends it).
  const channel = await page.request.put("/api/v1/notifications/admin/channel-configs/email", {
    headers: sameOrigin(),
    data: { enabled: true, config: { host: "127.0.0.1", port: smtp.port, secure: false, from: "reports@acme.test" } },
  });
  expect(channel.status()).toBe(200);

  await page.goto(SAMPLE);
  await expect(page.getByRole("heading", { level: 1, name: "Sales overview" })).toBeVisible();
  await page.getByRole("button", { name: "Schedule report" }).click();
  const dialog = page.getByRole("dialog", { name: "Schedule a report of this dashboard" });
  await dialog.getByLabel("Name").fill(`Monday sales ${run}`);
  await dialog.getByLabel("Time zone").fill("Europe/Berlin");
  await dialog.getByLabel("Recipients (e-mail addresses)").fill("gm@acme.test");
  await dialog.getByRole("button", { name: "Schedule", exact: true }).click();
  await expect(dialog.getByRole("status")).toContainText(`Scheduled "Monday sales ${run}"`);

  const row = dialog.getByTestId("report-schedules").locator("tr", { hasText: `Monday sales ${run}` });
  await expect(row).toContainText("Europe/Berlin");
  const before = smtp.received.length;
  await row.getByRole("button", { name: "Send now" }).click();
  await expect.poll(() => smtp.received.slice(before).filter((m) => m.to.includes("gm@acme.test")).length, { timeout: 90_000 }).toBe(1);

  const mail = smtp.received.slice(before).find((m) => m.to.includes("gm@acme.test"))!;
  expect(mail.raw).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click/m);
  const [pdf] = pdfAttachments(mail);
  expect(pdf.subarray(0, 5).toString("latin1")).toBe("%PDF-");
  const text = execFileSync("pdftotext", ["-", "-"], { input: pdf, encoding: "utf8" }).replace(/\s+/g, " ");
  expect(text).toContain("Sales overview");
  // The general manager's own three locations, not the admin's five.
  expect(text).toContain("Manhattan Flagship");
  expect(text).not.toContain("San Francisco Union Sq");

  // The admin list, reached from the top navigation's "Reports" (the modal dialog closed first), shows it with its last run.
  await dialog.getByRole("button", { name: "Close" }).click();
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Reports", exact: true }).click();
  await expect(page).toHaveURL(/\/admin\/reports$/);
  await expect(page.getByRole("heading", { level: 1, name: "Scheduled reports" })).toBeVisible();
  await expect(page.getByTestId("report-schedules").locator("tr", { hasText: `Monday sales ${run}` })).toContainText("sent");
});

test("the top navigation's Reports link is there for editors only (the page's own rule)", async ({ browser }) => {
  const analyst = await browser.newContext({ storageState: "e2e/.auth/analyst.json" });
  const page = await analyst.newPage();
  await page.goto("/dashboards/custom");
  const nav = page.getByRole("navigation", { name: "Main" });
  await expect(nav.getByRole("link", { name: "Dashboards", exact: true })).toBeVisible();
  await expect(nav.getByRole("link", { name: "Reports", exact: true })).toHaveCount(0);
  await analyst.close();
});

test("the Schedule report dialog starts from the filters on screen", async ({ page }) => {
  const locations = JSON.stringify(["loc_acme_bos"]);
  await page.goto(`${SAMPLE}?f.location_filter=${encodeURIComponent(locations)}`);
  await expect(page.getByRole("heading", { level: 1, name: "Sales overview" })).toBeVisible();
  await page.getByRole("button", { name: "Schedule report" }).click();
  const dialog = page.getByRole("dialog", { name: "Schedule a report of this dashboard" });
  await expect(dialog.locator('input[name="filter-location_filter"]')).toHaveValue(locations);
  await dialog.getByRole("button", { name: "Close" }).click();
});
