import { defineConfig, devices } from "@playwright/test";

const PORT = Number(process.env.E2E_PORT ?? 3100);
const baseURL = `http://127.0.0.1:${PORT}`;
// Set by scripts/test-all.mjs for its second browser run: the production build on a PostgreSQL
// server (a fresh database, migrated and seeded by the server's own start).
const databaseUrl = process.env.E2E_DATABASE_URL;

// Debian's Chromium; Playwright's own browser downloads are not reachable here.
const chromium = {
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
};

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  retries: process.env.CI ? 1 : 0,
  reporter: [["list"], ["json", { outputFile: databaseUrl ? "test-results/e2e-postgres-report.json" : "test-results/e2e-report.json" }]],
  globalSetup: "./e2e/global-setup.ts",
  use: {
    baseURL,
    storageState: "e2e/.auth/admin.json",
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: chromium,
  },
  projects: [{ name: "chromium", use: { ...devices["Desktop Chrome"], launchOptions: chromium } }],
  webServer: {
    command: "node scripts/start.mjs",
    url: `${baseURL}/api/health`,
    timeout: 240_000,
    reuseExistingServer: false,
    stdout: "pipe",
    env: {
      PORT: String(PORT),
      QUARRY_DATA_DIR: databaseUrl ? ".data/e2e-postgres" : ".data/e2e",
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      QUARRY_PUBLIC_URL: baseURL,
      NEXTAUTH_URL: baseURL,
      QUARRY_LOG_LEVEL: "warn",
      // e2e/notifications.spec.ts starts its SMTP server and webhook receiver on 127.0.0.1, which the SSRF guard refuses unless allow-listed.
      NOTIFICATIONS_CONFIG: JSON.stringify({ url_allow_list: ["127.0.0.1"] }),
    },
  },
});
