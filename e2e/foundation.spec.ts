import { expect, test } from "@playwright/test";

test("an admin sees their organization's name and locations", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByTestId("org-name")).toHaveText("Acme Retail");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Acme Retail");
  await expect(page.getByRole("cell", { name: "Manhattan Flagship" })).toBeVisible();
});

test("signing in with a wrong password says so", async ({ browser }) => {
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  const page = await context.newPage();
  await page.goto("/signin");
  await page.getByLabel("Email").fill("admin@acme.test");
  await page.getByLabel("Password").fill("wrong");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "Wrong email or password." })).toBeVisible();
  await context.close();
});

test("pages redirect to sign-in without a session", async ({ browser }) => {
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  const page = await context.newPage();
  await page.goto("/");
  await expect(page).toHaveURL(/\/signin/);
  await context.close();
});

test("globex's admin sees globex, not acme", async ({ browser }) => {
  const context = await browser.newContext({ storageState: "e2e/.auth/globex-admin.json" });
  const page = await context.newPage();
  await page.goto("/");
  await expect(page.getByTestId("org-name")).toHaveText("Globex Foods");
  await expect(page.getByRole("cell", { name: "Berlin Mitte" })).toBeVisible();
  await expect(page.getByText("Manhattan Flagship")).toHaveCount(0);
  await context.close();
});

test("the browser session and the API agree on the caller", async ({ page }) => {
  const res = await page.request.get("/api/v1/locations");
  expect(res.status()).toBe(200);
  const body = await res.json();
  expect(body.total).toBe(5);
});

test("/docs renders the API reference with the locations route", async ({ page }) => {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto("/docs");
  await expect(page.getByTestId("api-reference")).toBeVisible();
  // Every section is listed, closed (components/api-reference.tsx); each opens in full.
  for (const section of ["Meta", "Dashboards", "Notifications", "Locations"]) await expect(page.locator(".opblock-tag", { hasText: new RegExp(`^${section}`) })).toBeVisible();
  await page.locator(".opblock-tag", { hasText: /^Locations/ }).click();
  await expect(page.getByText("/api/v1/locations").first()).toBeVisible();
  expect(errors).toEqual([]);
});

test("unknown API paths answer 404 with a detail", async ({ request }) => {
  const res = await request.get("/api/v1/no-such-thing");
  expect(res.status()).toBe(404);
  expect((await res.json()).detail).toMatch(/No endpoint GET \/api\/v1\/no-such-thing/);
  // Outside /api/v1 too: JSON, not Next's HTML page (issue 32 §6).
  const other = await request.get("/api/v2/locations");
  expect(other.status()).toBe(404);
  expect(other.headers()["content-type"]).toMatch(/^application\/json/);
  expect((await other.json()).detail).toBe("No endpoint GET /api/v2/locations; see /docs");
});
