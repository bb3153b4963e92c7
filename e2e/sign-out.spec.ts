import { expect, request, test } from "@playwright/test";

// Signing out ends the session on the server: a copy of the cookie taken before is refused at once,
// not when the 12-hour cookie would have expired (issue 14 §3; lib/auth/session-revocation.ts).
test.use({ storageState: { cookies: [], origins: [] } });

test("after Sign out, a copy of the session cookie gets 401 from the API", async ({ page, baseURL }) => {
  await page.goto("/signin");
  await page.getByLabel("Email").fill("analyst@acme.test");
  await page.getByLabel("Password").fill("quarry-demo");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => !url.pathname.startsWith("/signin"));

  const session = (await page.context().cookies()).filter((c) => c.name.endsWith("next-auth.session-token"));
  expect(session).toHaveLength(1);
  const copy = await request.newContext({ baseURL, storageState: { cookies: session, origins: [] } });
  expect((await copy.get("/api/v1/custom-dashboards")).status()).toBe(200);

  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await page.waitForURL((url) => url.pathname.startsWith("/signin"));

  const after = await copy.get("/api/v1/custom-dashboards");
  expect(after.status()).toBe(401);
  await copy.dispose();
});
