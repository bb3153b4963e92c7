import { expect, test, type Page } from "@playwright/test";
import { sameOrigin } from "./same-origin";

/*
 * The editor's History panel (issue 30 §2): a dashboard published by a person and then by a CI key
 * through plan/apply shows both versions with their publisher, message and commit; the diff of the
 * first against the draft names the change; Restore and publish makes a new version that says what
 * it restored, and the draft then means the same as that version; publishing from the editor then
 * shows the new version as live without a reload.
 */

// Its own slug each run: a second run on the same data folder (a local rerun, a soak round) would find the first one's.
const SLUG = `history-e2e-${Date.now().toString(36)}`;

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" && !message.location().url.endsWith("/favicon.ico")) errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  return errors;
}

test("history lists who published each version, diffs one against the draft, and restores it as a new version", async ({ page }) => {
  const errors = watchErrors(page);
  const headers = sameOrigin();
  const api = page.request;
  const sample = await (await api.get("/api/v1/custom-dashboards/sample-sales")).json();
  const created = await api.post("/api/v1/custom-dashboards", { headers, data: { name: "History e2e", slug: SLUG, spec_yaml: sample.spec_yaml } });
  expect(created.status()).toBe(201);
  const id = (await created.json()).id;
  expect((await api.post(`/api/v1/custom-dashboards/${id}/publish`, { headers, data: { message: "First cut" } })).status()).toBe(200);

  const key = await (await api.post("/api/v1/api-keys", { headers, data: { name: "CI e2e", scopes: ["dashboards:read", "dashboards:write", "dashboards:publish"] } })).json();
  const ci = { authorization: `Bearer ${key.key}` };
  const files = [{ path: `${SLUG}.yaml`, content: sample.spec_yaml.replace("name: Sales overview", "name: Sales overview (CI)") }];
  const plan = await (await api.post("/api/v1/custom-dashboards/_plan", { headers: ci, data: { files } })).json();
  expect(plan.items.find((i: { slug: string }) => i.slug === SLUG).action).toBe("update");
  const applied = await api.post("/api/v1/custom-dashboards/_apply", {
    headers: ci,
    data: { files, expected: plan.expected, publish: true, message: "Rename from CI", source: { repository: "acme/dashboards", commit: "0123456789abcdef", ref: "refs/heads/main" } },
  });
  expect(applied.status()).toBe(200);

  await page.goto(`/dashboards/custom/${SLUG}/edit`);
  const history = page.getByTestId("version-history");
  await expect(history.getByRole("heading", { name: "History" })).toBeVisible();
  const v2 = page.getByTestId("version-2");
  await expect(v2).toContainText("CI e2e (API key)");
  await expect(v2).toContainText("Rename from CI");
  await expect(v2).toContainText("acme/dashboards · 0123456789ab · refs/heads/main");
  await expect(v2).toContainText(/live/i);
  await expect(page.getByTestId("version-1")).toContainText("First cut");

  await page.getByTestId("version-1").getByRole("button", { name: "Diff with draft" }).click();
  const diff = page.getByTestId("version-diff");
  await expect(diff).toContainText("Version 1 → draft: 0 added, 0 removed, 1 changed, 0 moved");
  await expect(diff).toContainText('metadata.name: "Sales overview" → "Sales overview (CI)"');

  page.once("dialog", (dialog) => void dialog.accept());
  await page.getByTestId("version-1").getByRole("button", { name: "Restore and publish" }).click();
  const v3 = page.getByTestId("version-3");
  await expect(v3).toContainText(/restores 1/i);
  await expect(v3).toContainText("Restore version 1");
  await expect(v3).toContainText(/live/i);
  await v3.getByRole("button", { name: "Diff with draft" }).click();
  await expect(page.getByTestId("version-diff")).toContainText("Version 3 → draft: no changes");

  // Publishing from the editor moves "live" to the new version without a reload (issue 44 §7).
  await page.getByRole("button", { name: "Publish", exact: true }).click();
  await expect(page.getByTestId("version-4").getByText("live", { exact: true })).toBeVisible();
  await expect(v3.getByText("live", { exact: true })).toHaveCount(0);
  expect(errors).toEqual([]);
});
