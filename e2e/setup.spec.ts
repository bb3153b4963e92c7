import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import { expect, test } from "@playwright/test";

// First-run setup (issue 43 §1) on an empty install: the sign-in page sends a new install to /setup, the form makes
// the organization and its first admin, the admin signs in, and the page is gone (404) once it has been used.
//
// The shared e2e server is seeded with the demo, so it is no empty install: this spec starts a second server of the
// same production build (scripts/start.mjs, as playwright.config.ts's webServer does) with the demo turned off and a
// data folder of its own, emptied first, on E2E_SETUP_PORT (3101 unless said). Embedded engine only: the e2e run on
// PostgreSQL (E2E_DATABASE_URL) would need a second, empty database, so this spec skips there.

const PORT = Number(process.env.E2E_SETUP_PORT ?? 3101);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const DATA_DIR = ".data/e2e-setup";

let server: ChildProcess | undefined;

test.skip(Boolean(process.env.E2E_DATABASE_URL), "an empty install on PostgreSQL needs a second, empty database");
test.use({ baseURL: ORIGIN, storageState: { cookies: [], origins: [] } });

test.beforeAll(async () => {
  test.setTimeout(240_000);
  fs.rmSync(DATA_DIR, { recursive: true, force: true });
  server = spawn(process.execPath, ["scripts/start.mjs"], {
    env: {
      ...process.env,
      PORT: String(PORT),
      QUARRY_DATA_DIR: DATA_DIR,
      QUARRY_SEED_DEMO: "false",
      QUARRY_PUBLIC_URL: ORIGIN,
      NEXTAUTH_URL: ORIGIN,
      QUARRY_LOG_LEVEL: "warn",
    },
    stdio: "ignore",
  });
  // Ready when its health check answers, as Playwright waits for the shared server.
  await expect(async () => {
    expect((await fetch(`${ORIGIN}/api/health`)).ok).toBe(true);
  }).toPass({ timeout: 220_000, intervals: [1_000] });
});

test.afterAll(async () => {
  if (!server || server.exitCode !== null) return;
  const stopped = new Promise((resolve) => server!.once("exit", resolve));
  server.kill("SIGTERM");
  await stopped;
});

test("an empty install opens on the setup form, makes one organization and its admin, then closes it", async ({ page }) => {
  const email = "first-admin@setup.test";
  const password = "a long first password";

  // No organization yet: signing in is not possible, so the sign-in page leads to the setup form.
  await page.goto("/signin");
  await expect(page).toHaveURL(/\/setup$/);
  await expect(page.getByRole("heading", { name: "Set up Quarry" })).toBeVisible();

  const form = page.getByRole("form", { name: "Set up Quarry" });
  await form.getByLabel("Organization name").fill("Setup Test Co");
  await form.getByLabel("Short name (slug)").fill("setup-test");
  await form.getByLabel("Time zone").fill("Europe/Berlin");
  await form.getByLabel("Currency").fill("eur");
  await form.getByLabel("Your name").fill("First Admin");
  await form.getByLabel("E-mail", { exact: true }).fill(email);
  await form.getByLabel("Password", { exact: true }).fill(password);
  await form.getByRole("button", { name: "Create the organization" }).click();
  await expect(page.getByRole("status")).toContainText("Setup Test Co is ready");

  // The form is gone, and the API refuses a second setup.
  expect((await page.goto("/setup"))?.status()).toBe(404);
  const replay = await page.request.post("/api/v1/setup", {
    headers: { origin: ORIGIN },
    data: { organization_name: "Late", slug: "late", time_zone: "UTC", currency: "USD", admin_name: "Late", admin_email: "late@setup.test", admin_password: "another long password" },
  });
  expect(replay.status()).toBe(409);
  expect((await replay.json()).detail).toMatch(/already set up/);

  // The first admin signs in, as an admin of the new organization, and administers its people.
  await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => !url.pathname.startsWith("/signin"));
  await expect(page.getByText("Signed in as admin")).toBeVisible();
  await page.goto("/admin/members");
  await expect(page.getByTestId(`member-${email}`)).toContainText("admin");
});
