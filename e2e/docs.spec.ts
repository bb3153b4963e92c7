import { execFileSync } from "node:child_process";
import { expect, test } from "@playwright/test";

// A visitor with a bearer token only: no session cookie may make the call succeed.
test.use({ storageState: { cookies: [], origins: [] } });

/** A bearer token from the embedded issuer of the server under test (its key lives in the e2e data folder). */
function bearerToken(): string {
  const out = execFileSync("node_modules/.bin/tsx", ["--conditions=react-server", "scripts/token.ts", "--org", "acme", "--role", "analyst"], {
    env: { ...process.env, QUARRY_DATA_DIR: ".data/e2e" },
    encoding: "utf8",
  });
  return out.trim().split("\n").at(-1)!;
}

test("/docs renders the reference and runs “Try it out” with a token, without a console error", async ({ page }) => {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));

  // Opened on another host than QUARRY_PUBLIC_URL (127.0.0.1 here): "Try it out" must call the page's own origin, as
  // the CSP allows nothing else (issue 32 §6: the document's first server is relative).
  const origin = new URL(test.info().project.use.baseURL!).origin.replace("127.0.0.1", "localhost");
  await page.goto(`${origin}/docs`);
  const reference = page.getByTestId("api-reference");
  await expect(reference).toHaveAttribute("data-state", "ready");
  // Sections start closed (components/api-reference.tsx): open Locations.
  await page.locator(".opblock-tag", { hasText: /^Locations/ }).click();
  await expect(page.locator("#operations-Locations-getLocations")).toBeVisible();
  await expect(page.locator(".servers select option").first()).toHaveText(/^\/ - This server/);

  // Authorize with the bearer token.
  await page.locator(".auth-wrapper button.authorize").click();
  const dialog = page.locator(".modal-ux");
  await dialog.locator("input").first().fill(bearerToken());
  // Swagger UI labels its modal buttons "Apply credentials" (shown as Authorize) and Close.
  await dialog.getByRole("button", { name: "Apply credentials" }).click();
  await dialog.locator("button.btn-done").click();

  // Expand GET /api/v1/locations, try it out, execute.
  const operation = page.locator("#operations-Locations-getLocations");
  await operation.locator(".opblock-summary").click();
  await operation.getByRole("button", { name: "Try it out" }).click();
  await operation.getByRole("button", { name: "Execute" }).click();

  const live = operation.locator(".live-responses-table");
  await expect(live.locator("tbody .response-col_status").first()).toHaveText("200");
  await expect(live.locator("tbody .response-col_description").first()).toContainText("loc_acme_");
  await expect(operation.locator(".curl-command").first()).toContainText("Authorization: Bearer");
  await expect(operation.locator(".curl-command").first()).toContainText(`${origin}/api/v1/locations`);

  expect(problems).toEqual([]);
});
