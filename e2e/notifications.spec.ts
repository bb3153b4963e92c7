import fs from "node:fs";
import { expect, test, type Locator, type Page } from "@playwright/test";
import { startReceiver, startSmtp } from "../test/support/notification-servers";

/** Names unique to this run, so a reused e2e data folder never confuses rows. */
const run = Date.now().toString(36);
/** Screenshots of the page for people to look at; E2E_SCREENS moves them out of test-results, which each run empties. */
const SCREENS = process.env.E2E_SCREENS ?? "test-results/screens";
/** A floor no location reaches, unique to the run so the inbox item's title is too. */
const FLOOR = 1_000_000_000 + (Date.now() % 100_000);
// The rule prints revenue in the revenue KPI's declared format, as dashboards do.
const FLOOR_TEXT = `$${FLOOR.toLocaleString("en-US", { minimumFractionDigits: 2 })}`;
const EMAIL_RULE = `sales.floor.e2e${run}`;
const WEBHOOK_RULE = `sales.floor.hook${run}`;
const MEMBER = `ops-${run}@acme.test`;

let smtp: Awaited<ReturnType<typeof startSmtp>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

test.describe.configure({ mode: "serial" });
// Rules' next runs are shown in UTC, the zone their cron runs in; the browser in UTC keeps the page's other times alike.
test.use({ timezoneId: "UTC" });

test.beforeAll(async () => {
  smtp = await startSmtp();
  receiver = await startReceiver();
});

test.afterAll(async () => {
  await smtp?.close();
  await receiver?.close();
});

const channelRow = (page: Page, kind: string) => page.locator(`tr[data-channel="${kind}"]`);
const ruleRow = (page: Page, key: string) => page.locator(`tr[data-rule="${key}"]`);
const section = (page: Page, heading: string | RegExp) => page.locator("section").filter({ has: page.getByRole("heading", { level: 2, name: heading }) });

async function openAdmin(page: Page) {
  await page.goto("/admin/notifications");
  await expect(page.getByRole("heading", { level: 1, name: "Notifications" })).toBeVisible();
}

/** Reloads the server-rendered page until `locator` shows: deliveries are made by the in-process worker, not the request. */
async function reloadUntilVisible(page: Page, locator: Locator) {
  await expect(async () => {
    await page.reload();
    await expect(locator).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 45_000 });
}

async function configureChannel(page: Page, kind: string, fields: Record<string, string>) {
  await channelRow(page, kind).getByRole("button", { name: /Configure|Edit/ }).click();
  const form = page.getByRole("form", { name: `Configure ${kind}` });
  for (const [label, value] of Object.entries(fields)) await form.getByLabel(label, { exact: true }).fill(value);
  const enabled = form.getByLabel("Enabled");
  if (!(await enabled.isChecked())) await enabled.check();
  await form.getByRole("button", { name: "Save" }).click();
  await expect(form).toBeHidden();
  await expect(channelRow(page, kind).getByText("enabled", { exact: true })).toBeVisible();
}

async function createRule(page: Page, key: string, channels: { email?: boolean; webhook?: boolean; in_app?: boolean }) {
  await page.getByRole("button", { name: "New rule" }).click();
  const form = page.getByRole("form", { name: "New rule" });
  // Picking the base rule resets key, name and cadence to its defaults, so it comes first.
  await form.getByLabel("Base rule").selectOption("sales.revenue_below_floor");
  await form.getByLabel("Key").fill(key);
  // The page names rules by their name (the key on hover): a name holding the key lets rows be found by it.
  await form.getByLabel("Name").fill(`Floor ${key}`);
  // Once a year: the page shows its next runs, and no cron occurrence interferes with the run triggered here.
  await form.getByLabel("Cadence (cron, UTC)").fill("0 0 1 1 *");
  await form.getByLabel("min_revenue").fill(String(FLOOR));
  const group = form.getByRole("group", { name: "Channels" });
  // Only configured channels are offered; in-app always is (labelled "In-app" everywhere; the API value is in_app).
  await expect(group.getByLabel("In-app", { exact: true })).toBeVisible();
  for (const box of await group.getByRole("checkbox").all()) {
    const kind = (await box.getAttribute("value")) as keyof typeof channels;
    await box.setChecked(channels[kind] === true);
  }
  await form.getByRole("button", { name: "Create rule" }).click();
  await expect(page.getByRole("status").filter({ hasText: `Rule ${key} created.` })).toBeVisible();
  const row = ruleRow(page, key);
  await expect(row).toBeVisible();
  return row;
}

test("an admin configures email against a real SMTP server, fans a new rule out to a group, triggers it and sees the delivery", async ({ page }) => {
  await openAdmin(page);
  await configureChannel(page, "email", { "SMTP host": "127.0.0.1", Port: String(smtp.port), "From address": "alerts@acme.test" });
  await expect(channelRow(page, "email")).toContainText(`port: ${smtp.port}`);

  const tested = smtp.received.length;
  await channelRow(page, "email").getByRole("button", { name: "Send test" }).click();
  await expect(channelRow(page, "email").getByRole("status")).toHaveText("Test message sent.");
  const testMail = smtp.received.slice(tested).find((m) => m.to.includes("admin@acme.test"));
  expect(testMail?.from).toBe("alerts@acme.test");
  expect(testMail?.raw).toContain("Quarry test message");

  const row = await createRule(page, EMAIL_RULE, { email: true, in_app: true });
  // The next runs of "0 0 1 1 *": the coming two New Year's midnights.
  const next = row.locator("td").nth(5).locator("div");
  await expect(next).toHaveCount(2);
  const year = new Date().getUTCFullYear();
  await expect(next.first()).toContainText(String(year + 1));
  await expect(next.last()).toContainText(String(year + 2));
  await expect(row).toContainText("min_revenue = " + String(FLOOR));

  const groupForm = page.getByRole("form", { name: "Add email group" });
  await groupForm.getByLabel("Rule").selectOption(EMAIL_RULE);
  await groupForm.getByLabel("Group name").fill(`Ops ${run}`);
  await groupForm.getByLabel("Members").fill(MEMBER);
  await groupForm.getByRole("button", { name: "Add group" }).click();
  await expect(section(page, "Email groups").getByRole("row").filter({ hasText: MEMBER })).toBeVisible();
  await expect(ruleRow(page, EMAIL_RULE)).toContainText("+1 email group(s)");

  const before = smtp.received.length;
  await ruleRow(page, EMAIL_RULE).getByRole("button", { name: "Run now" }).click();
  await expect(ruleRow(page, EMAIL_RULE).getByRole("status")).toHaveText("Queued: the outcome appears under Last run.");
  await expect.poll(() => smtp.received.slice(before).filter((m) => m.to.includes(MEMBER)).length, { timeout: 45_000 }).toBe(1);
  const alert = smtp.received.slice(before).find((m) => m.to.includes(MEMBER));
  expect(alert?.raw).toContain(`took less than ${FLOOR_TEXT}`);
  // The rule shows what it did without a reload (issue 32 §5): the page follows a run under way.
  await expect(ruleRow(page, EMAIL_RULE).getByTestId("last-run")).toContainText(/fired.*Email: \d+ delivered/s, { timeout: 30_000 });

  const recent = page.getByRole("table", { name: "Recent deliveries" });
  const delivered = recent.getByRole("row").filter({ hasText: MEMBER });
  await reloadUntilVisible(page, delivered.filter({ hasText: "delivered on attempt 1" }));
  await expect(delivered).toContainText(EMAIL_RULE);
  await expect(section(page, /Delivery health/).locator('[data-channel="email"]')).toContainText(/\d+%/);
  await expect(page.getByRole("img", { name: "Deliveries per hour by outcome" })).toBeVisible();
});

test("a permanently failing webhook lands in the dead letters, and a requeue delivers it", async ({ page }) => {
  receiver.state.failWith = (r) => (r.path === "/hook" ? 410 : null);
  await openAdmin(page);
  await configureChannel(page, "webhook", { URL: `${receiver.url}/hook`, "Signing secret (16+ characters)": `e2e-secret-${run}-0123456789` });
  await createRule(page, WEBHOOK_RULE, { webhook: true });
  await ruleRow(page, WEBHOOK_RULE).getByRole("button", { name: "Run now" }).click();
  await expect(ruleRow(page, WEBHOOK_RULE).getByRole("status")).toHaveText("Queued: the outcome appears under Last run.");

  const deadRow = section(page, /Dead letters/).getByRole("row").filter({ hasText: WEBHOOK_RULE });
  await reloadUntilVisible(page, deadRow);
  await expect(deadRow).toContainText("HTTP 410");
  await expect(deadRow).toContainText("1/6");

  receiver.state.failWith = () => null;
  const before = receiver.received.length;
  await deadRow.getByRole("button", { name: "Requeue" }).click();
  await expect.poll(() => receiver.received.slice(before).filter((r) => r.path === "/hook").length, { timeout: 45_000 }).toBe(1);
  const payload = JSON.parse(receiver.received.slice(before).find((r) => r.path === "/hook")!.body);
  expect(payload).toMatchObject({ rule_key: WEBHOOK_RULE, severity: "warning" });

  const recent = page.getByRole("table", { name: "Recent deliveries" }).getByRole("row").filter({ hasText: WEBHOOK_RULE });
  await reloadUntilVisible(page, recent.filter({ hasText: "delivered on attempt 1" }));
  await expect(deadRow).toHaveCount(0);
});

test("the bell shows the admin's unread alert and marks it read", async ({ page }) => {
  await openAdmin(page);
  const bell = page.getByRole("button", { name: /^Notifications, \d+ unread$/ });
  await expect(bell).not.toHaveAccessibleName("Notifications, 0 unread");
  const unread = Number((await bell.getAttribute("aria-label"))?.match(/(\d+) unread/)?.[1]);
  await bell.click();
  const panel = page.getByRole("dialog", { name: "Notifications" });
  const item = panel.getByRole("button").filter({ hasText: `took less than ${FLOOR_TEXT}` });
  await expect(item).toHaveCount(1);
  await expect(item).toContainText("click to mark read");
  fs.mkdirSync(SCREENS, { recursive: true });
  await page.screenshot({ path: `${SCREENS}/notifications-bell.png` });
  await item.click();
  await expect(item).not.toContainText("click to mark read");
  await expect(bell).toHaveAccessibleName(`Notifications, ${unread - 1} unread`);
  await page.keyboard.press("Escape");
  await expect(panel).toBeHidden();
});

test("the admin page reads well on a desktop and on a phone", async ({ page }) => {
  fs.mkdirSync(SCREENS, { recursive: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await openAdmin(page);
  await expect(page.getByRole("img", { name: "Deliveries per hour by outcome" }).locator("canvas").first()).toBeVisible();
  await page.screenshot({ path: `${SCREENS}/notifications-admin.png`, fullPage: true });
  await page.getByRole("button", { name: "New rule" }).click();
  await page.getByRole("form", { name: "New rule" }).screenshot({ path: `${SCREENS}/notifications-rule-form.png` });
  await page.getByRole("form", { name: "New rule" }).getByRole("button", { name: "Cancel" }).click();
  await channelRow(page, "email").getByRole("button", { name: "Edit" }).click();
  await page.getByRole("form", { name: "Configure email" }).screenshot({ path: `${SCREENS}/notifications-email-form.png` });
  await page.getByRole("form", { name: "Configure email" }).getByRole("button", { name: "Cancel" }).click();
  await page.setViewportSize({ width: 390, height: 844 });
  await openAdmin(page);
  // Nothing but the wide tables' own scrollers may scroll sideways on a phone.
  const { scrollWidth, outermost } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    // The elements that stick out past the viewport while their parent does not: the ones to blame.
    outermost: [...document.querySelectorAll("body *")]
      .filter((el) => el.getBoundingClientRect().right > innerWidth + 1 && (el.parentElement?.getBoundingClientRect().right ?? 0) <= innerWidth + 1)
      .map((el) => `${el.tagName.toLowerCase()}.${el.className} (${Math.round(el.getBoundingClientRect().right)}px)`),
  }));
  expect(scrollWidth, outermost.join("; ")).toBeLessThanOrEqual(390);
  await page.screenshot({ path: `${SCREENS}/notifications-admin-phone.png`, fullPage: true });
  for (const name of ["Channels", "Rules", "Email groups", "Quiet hours"]) {
    await section(page, name).screenshot({ path: `${SCREENS}/notifications-phone-${name.replace(" ", "-").toLowerCase()}.png` });
  }
  await section(page, /Delivery health/).screenshot({ path: `${SCREENS}/notifications-phone-health.png` });
  await page.getByRole("button", { name: /^Notifications, \d+ unread$/ }).click();
  const panel = page.getByRole("dialog", { name: "Notifications" });
  await expect(panel).toBeVisible();
  const box = await panel.boundingBox();
  expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
  await page.screenshot({ path: `${SCREENS}/notifications-bell-phone.png` });
});

test("disabling a rule from the page stops its schedule", async ({ page }) => {
  await openAdmin(page);
  for (const key of [EMAIL_RULE, WEBHOOK_RULE]) {
    await ruleRow(page, key).getByRole("button", { name: "Disable" }).click();
    await expect(ruleRow(page, key).getByText("disabled", { exact: true })).toBeVisible();
    await expect(ruleRow(page, key).getByRole("button", { name: "Run now" })).toBeDisabled();
  }
});

test("an analyst is told the page is for admins", async ({ browser }) => {
  const context = await browser.newContext({ storageState: "e2e/.auth/analyst.json" });
  const page = await context.newPage();
  await page.goto("/admin/notifications");
  // Next's route announcer is an alert too.
  await expect(page.getByRole("alert").filter({ hasText: "Admins only." })).toContainText("managed by your organization's admins");
  await expect(page.getByRole("heading", { name: "Channels" })).toHaveCount(0);
  await context.close();
});

test("globex's admin sees none of acme's rules, deliveries or dead letters", async ({ browser }) => {
  const context = await browser.newContext({ storageState: "e2e/.auth/globex-admin.json" });
  const page = await context.newPage();
  await openAdmin(page);
  await expect(page.getByRole("heading", { level: 2, name: "Rules" })).toBeVisible();
  await expect(ruleRow(page, EMAIL_RULE)).toHaveCount(0);
  await expect(ruleRow(page, WEBHOOK_RULE)).toHaveCount(0);
  await expect(page.getByText(MEMBER)).toHaveCount(0);
  await expect(page.getByText(WEBHOOK_RULE)).toHaveCount(0);
  await expect(channelRow(page, "email")).not.toContainText(`port: ${smtp.port}`);
  await page.screenshot({ path: `${SCREENS}/notifications-admin-globex.png`, fullPage: true });
  await context.close();
});
