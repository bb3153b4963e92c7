import { expect, test, type Browser } from "@playwright/test";
import { startTestIssuer, type TestIssuer } from "../test/support/oidc-issuer";
import { sameOrigin } from "./same-origin";

// Single sign-on (issue 43 §4): an admin sets up the organization's OpenID Connect provider on /admin/sso, a
// member of its domain signs in through the provider's own form in the browser (account made just in time,
// role from their group), and a group removed at the provider lowers the role at the next sign-in. The
// provider is `oidc-provider` on 127.0.0.1, which the e2e server reaches through NOTIFICATIONS_CONFIG's
// allow-list (playwright.config.ts). The refusals (audience, replayed code, state, nonce, domain, SSO only)
// are covered on both engines by lib/sso/sso.test.ts.

let idp: TestIssuer;

test.beforeAll(async () => {
  const base = String(test.info().project.use.baseURL);
  idp = await startTestIssuer({ redirectUris: [`${base}/api/auth/callback/sso-acme`] });
  idp.accounts.set("carol", { email: "carol@acme-sso-e2e.test", email_verified: true, name: "Carol SSO", groups: ["nyc-managers"] });
});

// The admin's context (the project's storage state) removes the settings however the test ended.
test.afterAll(async ({ browser }) => {
  const admin = await browser.newContext();
  await admin.request.delete("/api/v1/sso", { headers: sameOrigin() });
  await admin.close();
  await idp?.close();
});

/** A browser with no session signs in through the provider as `login`; answers the page and its session's role. */
async function signInThroughProvider(browser: Browser, login: string) {
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  const page = await context.newPage();
  await page.goto("/signin");
  await page.getByLabel("Work e-mail or organization").fill("carol@acme-sso-e2e.test");
  await page.getByRole("button", { name: "Continue with single sign-on" }).click();
  await page.waitForURL((url) => url.origin === idp.issuer);
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.waitForURL((url) => url.origin !== idp.issuer && !url.pathname.startsWith("/signin"));
  const session = (await (await page.request.get("/api/auth/session")).json()) as { user?: { role?: string } };
  return { page, context, role: session.user?.role };
}

test("an admin sets up SSO; a member signs in through the provider, and a removed group lowers the role", async ({ page, browser }) => {
  await page.goto("/admin/sso");
  await page.getByLabel("Issuer URL").fill(idp.issuer);
  await page.getByLabel("Client ID").fill(idp.clientId);
  await page.getByLabel("Client secret").fill(idp.clientSecret);
  await page.getByLabel("E-mail domains").fill("acme-sso-e2e.test");
  await page.getByRole("button", { name: "Add mapping" }).click();
  const mapping = page.getByTestId("sso-mapping-0");
  await mapping.getByLabel("Claim value").fill("nyc-managers");
  await mapping.getByLabel("Role").selectOption("general_manager");
  await mapping.getByLabel("Locations").selectOption(["loc_acme_nyc"]);
  await page.getByLabel("When no mapping matches").selectOption("analyst");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Saved. The next sign-in uses these settings.")).toBeVisible();
  // The secret is never shown back.
  await page.reload();
  await expect(page.getByLabel("Client secret")).toHaveValue("");
  expect(await page.content()).not.toContain(idp.clientSecret);

  const first = await signInThroughProvider(browser, "carol");
  expect(first.role).toBe("general_manager");
  await expect(first.page.getByText("Signed in as general manager")).toBeVisible();

  idp.accounts.set("carol", { ...idp.accounts.get("carol")!, groups: [] });
  const second = await signInThroughProvider(browser, "carol");
  expect(second.role).toBe("analyst");
  // The earlier session ended with the change of role.
  await first.page.goto("/");
  await expect(first.page).toHaveURL(/\/signin/);
  await first.context.close();
  await second.context.close();
});
