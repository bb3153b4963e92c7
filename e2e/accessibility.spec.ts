import fs from "node:fs";
import path from "node:path";
import { expect, test, type Browser, type Page } from "@playwright/test";
import type { AxeResults } from "axe-core";
import { sameOrigin } from "./same-origin";
import { txtFile } from "../test/support/document-files";

/**
 * Issue 27 §5: no critical or serious axe-core violation on any page a user reaches, and a phone
 * layout whose navigation and table actions fit 390 px. axe-core is the copy already installed
 * (a dependency of the lint setup), injected through the DevTools protocol so the pages' CSP,
 * which refuses inline scripts, does not stop it.
 */
const AXE_SOURCE = fs.readFileSync(path.join(process.cwd(), "node_modules/axe-core/axe.min.js"), "utf8");

declare global {
  interface Window {
    axe: { run: (context: Document, options: object) => Promise<AxeResults> };
  }
}

const SAMPLE = "sample-sales";
/** A public copy of the sample, for the page anyone with the link sees. */
const PUBLIC_SLUG = "a11y-public";
const PHONE = { width: 390, height: 844 };

/** Critical and serious violations on the page as it is now, one line per violation with the first offending elements. */
async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  return results.violations
    .filter((v) => v.impact === "critical" || v.impact === "serious")
    .map((v) => `${v.impact} ${v.id} (${v.help}): ${v.nodes.slice(0, 4).map((n) => `${n.target.join(" ")}${n.failureSummary ? ` — ${n.failureSummary.split("\n").slice(1).join(" ").trim()}` : ""}`).join(" | ")}`);
}

async function expectAccessible(page: Page, what: string) {
  // Soft: one run reports every page's violations, not only the first page's.
  expect.soft(await seriousViolations(page), `${what}: critical or serious axe-core violations`).toEqual([]);
}

/** Every widget of the tab is painted: no skeleton, no pending re-query, charts drawn and grids built. */
async function dashboardSettled(page: Page) {
  // A tab change re-queries after it renders: wait for that request to be over before looking at the states.
  await page.waitForLoadState("networkidle");
  await expect(page.getByTestId("dashboard-grid").locator("[data-grid-cell]").first()).toBeVisible();
  await expect(page.locator('section[data-widget-id][data-state="skeleton"], section[data-widget-id][data-state="loading"]')).toHaveCount(0);
  // Charts draw after they load in the browser; Tabulator builds its grid after it loads too.
  await expect(page.locator('section[data-component="echarts"][data-state="ready"] canvas').first()).toBeVisible();
  for (const grid of await page.locator('section[data-component="tabulator"][data-state="ready"]').all()) await expect(grid.locator(".tabulator-row").first()).toBeVisible();
}

async function anonymousPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  return context.newPage();
}

test.describe("axe-core finds no critical or serious violation", () => {
  test("on the sign-in page", async ({ browser }) => {
    const page = await anonymousPage(browser);
    await page.goto("/signin");
    await expect(page.getByRole("button", { name: "Sign in" })).toBeVisible();
    await expectAccessible(page, "/signin");
    await page.context().close();
  });

  test("on home, the dashboard list, documents, chat, notifications, API keys and the API reference", async ({ page }) => {
    const pages: [string, () => Promise<void>][] = [
      ["/", () => expect(page.getByRole("heading", { level: 1 })).toBeVisible()],
      ["/dashboards/custom", () => expect(page.locator(`[data-testid="dashboard-card"][data-slug="${SAMPLE}"]`)).toBeVisible()],
      ["/documents", () => expect(page.getByRole("heading", { level: 1, name: "Documents" })).toBeVisible()],
      ["/data", () => expect(page.getByRole("heading", { level: 1, name: "Data" })).toBeVisible()],
      ["/chat", () => expect(page.getByRole("heading", { level: 1 })).toBeVisible()],
      ["/admin/notifications", () => expect(page.getByRole("heading", { level: 1 })).toBeVisible()],
      ["/admin/api-keys", () => expect(page.getByRole("heading", { level: 1 })).toBeVisible()],
      ["/docs", () => expect(page.locator(".opblock-tag", { hasText: /^Dashboards/ })).toBeVisible({ timeout: 30_000 })],
    ];
    for (const [url, ready] of pages) {
      await page.goto(url);
      await ready();
      await expectAccessible(page, url);
    }
  });

  test("on every tab of the sample dashboard and in its editor", async ({ page }) => {
    await page.goto(`/dashboards/custom/${SAMPLE}`);
    await dashboardSettled(page);
    const tabs = await page.getByRole("tab").allTextContents();
    expect(tabs.length).toBeGreaterThan(1);
    for (const name of tabs) {
      await page.getByRole("tab", { name }).click();
      await expect(page.getByRole("tab", { name })).toHaveAttribute("aria-selected", "true");
      await dashboardSettled(page);
      await expectAccessible(page, `${SAMPLE}, tab ${name}`);
    }
    await page.goto(`/dashboards/custom/${SAMPLE}/edit`);
    await expect(page.locator(".cm-content").first()).toBeVisible();
    await expectAccessible(page, `${SAMPLE} editor`);
  });

  test("on an embed and on a public dashboard, which also have a main landmark and a level-one heading", async ({ page, browser }) => {
    const created = await page.request.post(`/api/v1/custom-dashboards/${SAMPLE}/embed`, { headers: sameOrigin(), data: { expires_in: 3600 } });
    expect(created.status()).toBe(201);
    const embed = (await created.json()) as { url: string };

    const sample = fs.readFileSync(path.join(process.cwd(), "docs/manifests/sample-dashboard.yaml"), "utf8").replace("public: false", "public: true");
    const made = await page.request.post("/api/v1/custom-dashboards", { headers: sameOrigin(), data: { name: "Accessible public", slug: PUBLIC_SLUG, spec_yaml: sample } });
    if (made.status() === 409) expect((await page.request.put(`/api/v1/custom-dashboards/${PUBLIC_SLUG}`, { headers: sameOrigin(), data: { spec_yaml: sample } })).status()).toBe(200);
    else expect(made.status()).toBe(201);
    expect((await page.request.post(`/api/v1/custom-dashboards/${PUBLIC_SLUG}/publish`, { headers: sameOrigin() })).status()).toBe(200);

    const visitor = await anonymousPage(browser);
    for (const url of [new URL(embed.url).pathname, `/public/acme/${PUBLIC_SLUG}`]) {
      await visitor.goto(url);
      await dashboardSettled(visitor);
      await expect(visitor.getByRole("main")).toHaveCount(1);
      await expect(visitor.getByRole("heading", { level: 1 })).toHaveCount(1);
      for (const name of await visitor.getByRole("tab").allTextContents()) {
        await visitor.getByRole("tab", { name }).click();
        await dashboardSettled(visitor);
        await expectAccessible(visitor, `${url}, tab ${name}`);
      }
    }
    await visitor.context().close();
  });
});

test.describe("in the dark colour scheme, axe-core finds no critical or serious violation", () => {
  // The stylesheet's prefers-color-scheme: dark palette (app/globals.css): contrast is measured again on it.
  test.use({ colorScheme: "dark" });

  test("on the main pages, the sample dashboard's first tab and the sign-in page", async ({ page, browser }) => {
    const pages: [string, () => Promise<void>][] = [
      ["/", () => expect(page.getByRole("heading", { level: 1 })).toBeVisible()],
      ["/dashboards/custom", () => expect(page.locator(`[data-testid="dashboard-card"][data-slug="${SAMPLE}"]`)).toBeVisible()],
      ["/documents", () => expect(page.getByRole("heading", { level: 1, name: "Documents" })).toBeVisible()],
      ["/data", () => expect(page.getByRole("heading", { level: 1, name: "Data" })).toBeVisible()],
      ["/admin/notifications", () => expect(page.getByRole("heading", { level: 1 })).toBeVisible()],
      ["/admin/members", () => expect(page.getByRole("heading", { level: 1 })).toBeVisible()],
      [`/dashboards/custom/${SAMPLE}`, () => dashboardSettled(page)],
    ];
    for (const [url, ready] of pages) {
      await page.goto(url);
      await ready();
      expect(await page.evaluate(() => matchMedia("(prefers-color-scheme: dark)").matches)).toBe(true);
      await expectAccessible(page, `${url} (dark)`);
    }
    const visitor = await browser.newPage({ colorScheme: "dark", storageState: { cookies: [], origins: [] } });
    await visitor.goto("/signin");
    await expect(visitor.getByRole("button", { name: "Sign in" })).toBeVisible();
    await expectAccessible(visitor, "/signin (dark)");
    await visitor.close();
  });
});

test.describe("on a phone (390 px)", () => {
  test.use({ viewport: PHONE });

  /** Elements sticking out past the viewport while their parent does not: the ones to blame for sideways scrolling. */
  async function overflow(page: Page): Promise<{ scrollWidth: number; outermost: string[] }> {
    return page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      outermost: [...document.querySelectorAll("body *")]
        .filter((el) => el.getBoundingClientRect().right > innerWidth + 1 && (el.parentElement?.getBoundingClientRect().right ?? 0) <= innerWidth + 1)
        .map((el) => `${el.tagName.toLowerCase()}.${el.className} (${Math.round(el.getBoundingClientRect().right)}px)`),
    }));
  }

  test("the navigation is a menu button that opens every link inside the screen", async ({ page }) => {
    await page.goto("/dashboards/custom");
    const menu = page.getByRole("button", { name: "Menu" });
    await expect(menu).toBeVisible();
    await expect(menu).toHaveAttribute("aria-expanded", "false");
    const nav = page.getByRole("navigation", { name: "Main" });
    await expect(nav.getByRole("link", { name: "Notifications" })).toBeHidden();
    const { scrollWidth, outermost } = await overflow(page);
    expect(scrollWidth, outermost.join("; ")).toBeLessThanOrEqual(PHONE.width);

    await menu.click();
    await expect(menu).toHaveAttribute("aria-expanded", "true");
    for (const name of ["Dashboards", "Data", "Documents", "Chat", "Notifications", "API keys", "API"]) {
      const link = nav.getByRole("link", { name, exact: true });
      await expect(link).toBeVisible();
      const box = (await link.boundingBox())!;
      expect(box.x, name).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, name).toBeLessThanOrEqual(PHONE.width);
    }
    await expectAccessible(page, "phone menu open");
    await nav.getByRole("link", { name: "Documents", exact: true }).click();
    await expect(page).toHaveURL(/\/documents$/);
    await expect(menu).toHaveAttribute("aria-expanded", "false");

    // A desktop width shows the links themselves and no menu button.
    await page.setViewportSize({ width: 1280, height: 900 });
    await expect(menu).toBeHidden();
    await expect(nav.getByRole("link", { name: "Notifications" })).toBeVisible();
  });

  /**
   * Every button and link of the table rows lies within the screen's width as the page opens (no
   * sideways scrolling of the page or of a table to find it) and takes a click there.
   */
  async function expectRowActionsReachable(page: Page, rows: ReturnType<Page["locator"]>, what: string) {
    const actions = rows.locator("button, a");
    const count = await actions.count();
    expect(count, `${what}: row actions`).toBeGreaterThan(0);
    for (let i = 0; i < count; i++) {
      const action = actions.nth(i);
      if (!(await action.isVisible())) continue;
      // Measured before anything scrolls: only the vertical position depends on the page's scroll.
      const box = (await action.boundingBox())!;
      const label = `${what}: ${(await action.getAttribute("aria-label")) ?? (await action.textContent())?.trim()}`;
      expect(box.x, label).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, label).toBeLessThanOrEqual(PHONE.width);
      // A trial click: Playwright checks the element would receive the click (visible, stable, not covered) without
      // clicking. A disabled action (Index with no embedding provider) is placed as well but takes no click.
      if (await action.isEnabled()) await action.click({ trial: true, timeout: 5_000 });
    }
  }

  test("every table action in documents and notifications is on screen and clickable", async ({ page }) => {
    // A document of this run, so the list has a row whatever else ran before.
    const created = await page.request.post("/api/v1/documents", { headers: sameOrigin(), data: { filename: `a11y-${Date.now().toString(36)}.txt` } });
    expect(created.status()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const upload = await page.request.post(`/api/v1/documents/${id}/upload?index=false`, { headers: { ...sameOrigin(), "content-type": "text/plain" }, data: txtFile() });
    expect(upload.ok()).toBe(true);
    await page.goto("/documents");
    await expect(page.getByTestId("document-row").first()).toBeVisible();
    let { scrollWidth, outermost } = await overflow(page);
    expect(scrollWidth, outermost.join("; ")).toBeLessThanOrEqual(PHONE.width);
    await expectRowActionsReachable(page, page.getByTestId("document-row"), "documents");

    await page.goto("/admin/notifications");
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    ({ scrollWidth, outermost } = await overflow(page));
    expect(scrollWidth, outermost.join("; ")).toBeLessThanOrEqual(PHONE.width);
    await expectRowActionsReachable(page, page.locator("main table tbody tr"), "notifications");
  });
});
