import fs from "node:fs";
import { chromium, type FullConfig } from "@playwright/test";

/** Signs in once per demo user that specs use and stores the sessions in e2e/.auth/. */
export default async function globalSetup(config: FullConfig) {
  const { baseURL, launchOptions } = config.projects[0].use;
  fs.mkdirSync("e2e/.auth", { recursive: true });
  const browser = await chromium.launch(launchOptions);
  for (const [file, email] of [["admin", "admin@acme.test"], ["globex-admin", "admin@globex.test"], ["analyst", "analyst@acme.test"]] as const) {
    const page = await browser.newPage({ baseURL });
    await page.goto("/signin");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("quarry-demo");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => !url.pathname.startsWith("/signin"));
    await page.context().storageState({ path: `e2e/.auth/${file}.json` });
    await page.close();
  }
  await browser.close();
}
