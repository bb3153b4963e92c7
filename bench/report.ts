// npm run bench -- report [base URL]: the sample dashboard as a report, rendered on the server without a
// browser (lib/reports), beside headless Chromium printing the same viewer page with page.pdf() in the
// same run (issue 29 §6).
//  - renderer: PDF (the overview tab, which is what Chromium prints of the viewer page, and both tabs; A4
//    portrait) and PNG (overview tab, 1200 px) in this process over a
//    seeded embedded database; cold = the first render of the process (fonts read, ECharts loaded),
//    warm = median of 5 more; peak RSS of this process while rendering, and its growth over the RSS
//    before the first render (the database engine lives in this process too).
//  - Chromium: Debian's, as the e2e tests use it, against a Quarry server (the URL given, else one this
//    bench starts from the production build with its own data folder): sign in once, then per report
//    open the viewer page, wait for every widget, page.pdf() A4. Cold includes the browser's launch;
//    warm = median of 5. Peak RSS = the browser's processes, summed, sampled every 50 ms (the server's
//    memory is not counted, as the renderer's database engine is: each side is charged what it adds).
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright";
import type { Principal } from "@/lib/access/roles";
import { seedSampleDashboard } from "@/lib/dashboards/dashboards";
import { withSeededDb } from "./lib/seeded-db";

const RUNS = 5;
const SAMPLE = "/dashboards/custom/sample-sales";
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;

/** Samples a number every 50 ms while `work` runs; answers the work's result and the largest sample. */
async function peakWhile<T>(sample: () => number, work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = sample();
  const timer = setInterval(() => (peak = Math.max(peak, sample())), 50);
  try {
    const result = await work();
    return { result, peak: Math.max(peak, sample()) };
  } finally {
    clearInterval(timer);
  }
}

/** RSS of this process's descendants whose command line names `name` (the browser Playwright started), from /proc (bytes). */
function childrenRss(name: string): number {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  let total = 0;
  const stack = [...(children.get(process.pid) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(name)) {
        const rss = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
        total += Number(rss ?? 0) * 1024;
      }
    } catch {
      // gone meanwhile
    }
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

interface Side {
  cold: number;
  warm: number;
  pages: number;
  peak: number;
}

async function renderer(): Promise<{ pdf: Side; overview: Side; png: Side; before: number }> {
  return withSeededDb("pglite", async () => {
    const dashboardId = (await seedSampleDashboard(admin)).id;
    const { renderDashboardReport } = await import("@/lib/reports/render");
    const before = process.memoryUsage().rss;
    const one = async (format: "pdf" | "png", tab?: string) => {
      const times: number[] = [];
      let pages = 0;
      const { peak } = await peakWhile(
        () => process.memoryUsage().rss,
        async () => {
          for (let i = 0; i <= RUNS; i++) {
            const started = performance.now();
            const report = await renderDashboardReport(admin, { dashboardId, filters: {}, format, tab });
            times.push(performance.now() - started);
            pages = report.pages;
          }
        },
      );
      return { cold: times[0], warm: median(times.slice(1)), pages, peak };
    };
    const pdf = await one("pdf");
    const overview = await one("pdf", "overview");
    const png = await one("png", "overview");
    return { pdf, overview, png, before };
  });
}

async function startServer(): Promise<{ base: string; server: ChildProcess | null; dir: string | null }> {
  const port = 3200 + (process.pid % 500);
  const base = `http://127.0.0.1:${port}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-bench-report-"));
  const server = spawn("node", ["scripts/start.mjs"], {
    env: { ...process.env, PORT: String(port), QUARRY_DATA_DIR: dir, QUARRY_PUBLIC_URL: base, NEXTAUTH_URL: base, QUARRY_LOG_LEVEL: "warn", DATABASE_URL: "" },
    stdio: "ignore",
    detached: true,
  });
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    if ((await fetch(`${base}/api/health`).catch(() => null))?.ok) return { base, server, dir };
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error("the Quarry server did not start within 300 s (is there a production build? npm run build)");
}

async function printViewer(page: Page, base: string): Promise<{ bytes: Buffer }> {
  await page.goto(`${base}${SAMPLE}`);
  await page.getByTestId("dashboard-grid").locator(".react-grid-item").first().waitFor();
  await page.waitForFunction(() => document.querySelector('section[data-widget-id][data-state="skeleton"], section[data-widget-id][data-state="loading"]') === null);
  return { bytes: await page.pdf({ format: "A4", printBackground: true }) };
}

async function chromiumSide(base: string): Promise<Side> {
  const times: number[] = [];
  let pages = 0;
  let browser: Browser | null = null;
  let context: BrowserContext | null = null;
  const { peak } = await peakWhile(
    () => childrenRss("chrom"),
    async () => {
      for (let i = 0; i <= RUNS; i++) {
        const started = performance.now();
        if (!browser) {
          browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
          // One context for the run: its session cookie serves every report, as a reporting service's browser keeps it.
          context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
          const signin = await context.newPage();
          await signin.goto(`${base}/signin`);
          await signin.getByLabel("Email").fill("admin@acme.test");
          await signin.getByLabel("Password").fill("quarry-demo");
          await signin.getByRole("button", { name: "Sign in" }).click();
          await signin.waitForURL((url) => !url.pathname.startsWith("/signin"));
          await signin.close();
        }
        const page = await context!.newPage();
        const { bytes } = await printViewer(page, base);
        await page.close();
        times.push(performance.now() - started);
        pages = (bytes.toString("latin1").match(/\/Type\s*\/Page[^s]/g) ?? []).length;
      }
    },
  );
  await (browser as Browser | null)?.close();
  return { cold: times[0], warm: median(times.slice(1)), pages, peak };
}

export default async function bench(args: string[]): Promise<void> {
  const given = args[0] ?? process.env.BENCH_URL;
  const { base, server, dir } = given ? { base: given.replace(/\/$/, ""), server: null, dir: null } : await startServer();
  try {
    const browser = await chromiumSide(base);
    const ours = await renderer();
    const row = (label: string, side: Side) =>
      `${label.padEnd(34)} cold ${side.cold.toFixed(0).padStart(6)} ms   warm ${side.warm.toFixed(0).padStart(6)} ms   pages ${String(side.pages).padStart(2)}   warm ms/page ${(side.warm / side.pages).toFixed(0).padStart(5)}   peak RSS ${mb(side.peak)}`;
    console.log(`report of ${SAMPLE} (acme admin, default filters), median of ${RUNS} warm runs, ${os.availableParallelism()} cores, load average ${os.loadavg()[0].toFixed(1)}`);
    console.log(row("Chromium page.pdf() (baseline)", browser));
    console.log(row("renderer PDF, overview tab", ours.overview));
    console.log(row("renderer PDF, both tabs", ours.pdf));
    console.log(row("renderer PNG, overview tab", ours.png));
    const peak = Math.max(ours.pdf.peak, ours.overview.peak, ours.png.peak);
    const growth = peak - ours.before;
    console.log(`renderer RSS: ${mb(ours.before)} before the first render (this process holds the embedded database engine too), peak growth ${mb(growth)}`);
    console.log(
      `ratios to Chromium (the same overview tab), warm: PDF ${(ours.overview.warm / browser.warm).toFixed(2)}x, PNG ${(ours.png.warm / browser.warm).toFixed(2)}x; both tabs per page ${(ours.pdf.warm / ours.pdf.pages / (browser.warm / browser.pages)).toFixed(2)}x; memory: renderer growth ${(growth / browser.peak).toFixed(2)}x, whole renderer process ${(peak / browser.peak).toFixed(2)}x of Chromium's peak`,
    );
    console.log("aim (issue 29): warm <= 0.25x Chromium's time, <= 0.5x its memory, <= 200 ms per page in steady state");
  } finally {
    if (server?.pid) process.kill(-server.pid, "SIGTERM");
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }
}
