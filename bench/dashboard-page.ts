// npm run bench -- dashboard-page [base URL] [--against URL] [--runs N] [--profile]: the seeded sample dashboard in
// headless Chromium against a running server (default http://127.0.0.1:3000; start it with `npm start`). Times, median of N (10):
//  - navigation: from navigation start to every widget of the first tab painted (no skeleton, no pending re-query,
//    a canvas in every chart on screen, two animation frames later), with the server's share = the document request
//    (server render with the first query) from request start to its last byte;
//  - filter change: from the click on a location to the last affected widget repainted, with the server's share =
//    the batch query request from request start to first response byte;
//  - main-thread long tasks (> 50 ms) during each: their sum and the longest.
// Baselines measured in the same run, so a loaded machine shows in both: the dashboard list page of the same server
// (same layout and framework chunks, no widgets), and with `--against URL` another build (e.g. main before a change)
// on the same data, its runs interleaved with these. `--profile` then records one navigation and one filter change of
// each build: the kinds of work inside long tasks (Chromium trace) and script time by the library of the chunk it ran
// in (CPU profile); both files are kept in test-results/ (docs/dashboards-viewer.md, "Benchmark").
// Each run uses filter values no earlier run used, so the server's short result cache never answers.
import { mkdir, writeFile } from "node:fs/promises";
import { chromium, type Browser, type Page } from "playwright";

const SAMPLE = "/dashboards/custom/sample-sales";
const LIST = "/dashboards/custom";
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Installed before any page script: `window.__settle(since)` resolves with the time (ms since navigation start) of
 * the second animation frame after every widget settled and every chart on screen has its canvas and, when `since`
 * is given, after a batch query that started after `since` answered. `window.__long` collects long tasks.
 */
const SETTLE_PROBE = `
window.__long = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__long.push({ start: e.startTime, duration: e.duration }); }).observe({ type: "longtask", buffered: true });
window.__settle = (since) => new Promise((resolve) => {
  const queried = () => since === undefined || performance.getEntriesByType("resource").some((e) => e.name.endsWith("/query") && e.startTime >= since && e.responseEnd > 0);
  const onScreen = (el) => { const r = el.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight && r.width > 0; };
  const settled = () => {
    // [data-grid-cell]: the server-laid grid; .react-grid-item: builds before it, for --against.
    const grid = document.querySelector('[data-testid="dashboard-grid"] [data-grid-cell], [data-testid="dashboard-grid"] .react-grid-item');
    const busy = document.querySelector('section[data-widget-id][data-state="skeleton"], section[data-widget-id][data-state="loading"]');
    const charts = [...document.querySelectorAll('section[data-component="echarts"][data-state="ready"]')].filter(onScreen);
    return grid !== null && busy === null && charts.every((c) => c.querySelector("canvas") !== null);
  };
  const tick = () => {
    if (queried() && settled()) requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now())));
    else requestAnimationFrame(tick);
  };
  tick();
});`;

type Probe = { __settle: (since?: number) => Promise<number>; __long: { start: number; duration: number }[] };

interface Run {
  total: number;
  server: number;
  /** Sum of long tasks in the measured span, and the longest one. */
  longSum: number;
  longMax: number;
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function signIn(page: Page, base: string) {
  await page.goto(`${base}/signin`);
  await page.getByLabel("Email").fill("admin@acme.test");
  await page.getByLabel("Password").fill("quarry-demo");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => !url.pathname.startsWith("/signin"));
}

/** A date range no other run (nor an earlier bench within the cache TTL) uses, so every widget is computed afresh. */
const dateFor = (run: number, salt: number) => `2026-0${1 + (salt % 9)}-${String(1 + run).padStart(2, "0")} to 2026-0${1 + (salt % 9)}-${String(12 + run).padStart(2, "0")}`;

const LOCATIONS = ["Manhattan Flagship", "Boston Back Bay", "Chicago Loop", "Austin South Congress", "San Francisco Union Sq"];

const longIn = (tasks: { start: number; duration: number }[], from: number, to: number) => {
  const inside = tasks.filter((t) => t.start >= from && t.start < to);
  return { longSum: inside.reduce((s, t) => s + t.duration, 0), longMax: inside.reduce((m, t) => Math.max(m, t.duration), 0) };
};

/** One navigation to the sample dashboard and one location change on it. */
async function measureDashboard(page: Page, base: string, run: number, salt: number): Promise<{ navigation: Run; filterChange: Run }> {
  await page.goto(`${base}${SAMPLE}?f.date=${encodeURIComponent(dateFor(run, salt))}`);
  const painted = await page.evaluate(() => (window as unknown as Probe).__settle());
  const navTiming = await page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
    return { requestStart: nav.requestStart, responseEnd: nav.responseEnd, long: (window as unknown as Probe).__long };
  });
  const navigation = { total: painted, server: navTiming.responseEnd - navTiming.requestStart, ...longIn(navTiming.long, 0, painted) };

  // Open the location list (not timed), then time one click: toggling location run % 5 gives a new set each run.
  await page.locator('section[data-widget-id="location_filter"]').getByRole("button", { name: "Locations" }).click();
  const box = page.getByRole("checkbox", { name: LOCATIONS[run % LOCATIONS.length] });
  await box.waitFor();
  const measured = await box.evaluate(async (input) => {
    const w = window as unknown as Probe;
    const start = performance.now();
    const done = w.__settle(start);
    (input as HTMLInputElement).click();
    const end = await done;
    const query = performance
      .getEntriesByType("resource")
      .filter((e): e is PerformanceResourceTiming => e.name.endsWith("/query") && e.startTime >= start)
      .at(-1);
    return { start, end, server: query ? query.responseStart - query.requestStart : NaN, long: w.__long };
  });
  await page.keyboard.press("Escape");
  return { navigation, filterChange: { total: measured.end - measured.start, server: measured.server, ...longIn(measured.long, measured.start, measured.end) } };
}

/** The dashboard list: the same app shell and framework, no widgets; what any page of this server costs now. */
async function measureList(page: Page, base: string): Promise<Run> {
  await page.goto(`${base}${LIST}`);
  await page.locator("main table, main ul, main p").first().waitFor();
  const total = await page.evaluate(() => new Promise<number>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now())))));
  const t = await page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
    return { server: nav.responseEnd - nav.requestStart, long: (window as unknown as Probe).__long };
  });
  return { total, server: t.server, ...longIn(t.long, 0, total) };
}

async function signedInPage(browser: Browser, base: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.addInitScript(SETTLE_PROBE);
  const page = await context.newPage();
  // A server just started may still be building its analytics copy: the warm-up waits for it.
  page.setDefaultTimeout(180_000);
  await signIn(page, base);
  // Warm-up: compiles nothing in production, but loads the client bundles into the HTTP cache as a returning analyst has them.
  for (let i = 0; i < 2; i++) {
    await page.goto(`${base}${SAMPLE}`);
    await page.evaluate(() => (window as unknown as Probe).__settle());
  }
  await page.goto(`${base}${LIST}`);
  return page;
}

/** Which library a client chunk holds, from markers in its text (chunk names are content hashes); the first match wins. */
const LIBRARY_MARKERS: [string, RegExp][] = [
  ["echarts", /zrender/],
  ["dashboard page chunk (widgets, grid, markdown)", /data-widget-id/],
  ["react-dom + next", /__reactContainer\$/],
  ["chrono-node + zod (filters, manifest)", /chrono/],
  ["tabulator", /TabulatorFull/],
  ["turbopack runtime", /TURBOPACK/],
];

async function chunkLibraries(urls: string[]): Promise<Map<string, string>> {
  const labels = new Map<string, string>();
  for (const url of urls) {
    if (!/^https?:/.test(url)) continue;
    const text = await fetch(url).then((r) => (r.ok ? r.text() : ""), () => "");
    const found = LIBRARY_MARKERS.find(([, re]) => re.test(text));
    labels.set(url, found ? found[0] : `other (${url.split("/").pop()})`);
  }
  return labels;
}

interface ProfileNode {
  id: number;
  callFrame: { url: string; functionName: string };
}

interface TraceEvent {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: { name?: string; data?: { url?: string } };
}

/** What the renderer's main thread did, by kind of work (Chromium trace event names). */
const WORK: [string, RegExp][] = [
  ["script", /^(FunctionCall|EvaluateScript|v8\.compile|v8\.compileModule|TimerFire|FireAnimationFrame|EventDispatch|RunMicrotasks|V8\.GCScavenger|MajorGC|MinorGC|v8\.run)$/],
  ["style and layout", /^(UpdateLayoutTree|Layout|RecalculateStyles|ScheduleStyleRecalculation|LayoutShift)$/],
  ["paint", /^(Paint|PrePaint|Layerize|UpdateLayer|CompositeLayers|Commit|RasterTask)$/],
  ["HTML parsing", /^ParseHTML$/],
];

/**
 * Main-thread time of one action, attributed twice: from a Chromium trace, the long tasks (> 50 ms) and what kind of
 * work filled them; from a CPU profile, script time by the library of the chunk each sampled function lives in.
 */
async function profiled(page: Page, build: string, label: string, action: () => Promise<void>): Promise<void> {
  const browser = page.context().browser()!;
  await browser.startTracing(page, { categories: ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute"] });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  await action();
  const { profile } = (await cdp.send("Profiler.stop")) as unknown as { profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] } };
  await cdp.detach();
  await writeFile(`test-results/dashboard-page-${`${build} ${label}`.replace(/\W+/g, "-")}.cpuprofile`, JSON.stringify(profile));
  const raw = await browser.stopTracing();
  // Kept for a closer look in Chrome DevTools' Performance panel (Load profile).
  const file = `test-results/dashboard-page-${`${build} ${label}`.replace(/\W+/g, "-")}.trace.json`;
  await mkdir("test-results", { recursive: true });
  await writeFile(file, raw);
  console.log(`  trace: ${file}`);
  const trace = JSON.parse(raw.toString()) as { traceEvents: TraceEvent[] };

  // The renderer's main thread: the thread named CrRendererMain that ran the most tasks.
  const mains = trace.traceEvents.filter((e) => e.name === "thread_name" && e.args?.name === "CrRendererMain").map((e) => `${e.pid}:${e.tid}`);
  const tasksOf = (key: string) => trace.traceEvents.filter((e) => e.ph === "X" && e.name === "RunTask" && `${e.pid}:${e.tid}` === key);
  const main = mains.sort((a, b) => tasksOf(b).length - tasksOf(a).length)[0];
  const events = trace.traceEvents.filter((e) => e.ph === "X" && `${e.pid}:${e.tid}` === main).sort((a, b) => a.ts - b.ts);
  // A navigation's tasks from the new document's first parse on: before it the renderer only waits for the server.
  const documentStart = events.find((e) => e.name === "ParseHTML")?.ts ?? 0;
  const long = events.filter((e) => e.name === "RunTask" && (e.dur ?? 0) > 50_000 && e.ts >= documentStart);
  const work = new Map<string, number>();
  for (const task of long) {
    const end = task.ts + (task.dur ?? 0);
    // The outermost recognised event of each span inside the task, so nested events are not counted twice.
    let covered = task.ts;
    for (const e of events) {
      if (e.ts < covered || e.ts >= end || e === task) continue;
      const kind = WORK.find(([, re]) => re.test(e.name))?.[0];
      if (!kind) continue;
      work.set(kind, (work.get(kind) ?? 0) + (e.dur ?? 0) / 1000);
      covered = e.ts + (e.dur ?? 0);
    }
  }
  const longSum = long.reduce((s, t) => s + (t.dur ?? 0) / 1000, 0);
  const explained = [...work.values()].reduce((s, v) => s + v, 0);
  console.log(`  ${label}: ${long.length} long tasks, ${longSum.toFixed(0)} ms (${long.map((t) => ((t.dur ?? 0) / 1000).toFixed(0)).join(", ")}), of which:`);
  for (const [kind, ms] of [...work].sort((a, b) => b[1] - a[1])) console.log(`    ${ms.toFixed(0).padStart(5)} ms  ${kind}`);
  // On a loaded machine most of it is the thread waiting for a core inside a task: nothing runs that a trace could name.
  console.log(`    ${(longSum - explained).toFixed(0).padStart(5)} ms  unlabelled (task overhead, or the thread waiting for a core)`);

  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfByUrl = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = byNode.get(id)!.callFrame;
    const key = frame.url || (frame.functionName.startsWith("(") ? frame.functionName : "(native calls)");
    selfByUrl.set(key, (selfByUrl.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const labels = await chunkLibraries([...selfByUrl.keys()]);
  const byLibrary = new Map<string, number>();
  for (const [url, ms] of selfByUrl) {
    const library = labels.get(url) ?? url;
    byLibrary.set(library, (byLibrary.get(library) ?? 0) + ms);
  }
  const rows = [...byLibrary].filter(([library]) => library !== "(idle)" && library !== "(program)").sort((a, b) => b[1] - a[1]);
  console.log(`  ${label}, script by library (CPU profile, self time; "(program)" = the browser's own work, ${(byLibrary.get("(program)") ?? 0).toFixed(0)} ms, left out):`);
  for (const [library, ms] of rows.slice(0, 8)) console.log(`    ${ms.toFixed(0).padStart(5)} ms  ${library}`);
}

const summary = (rows: Run[]) => ({
  total: median(rows.map((r) => r.total)),
  server: median(rows.map((r) => r.server)),
  longSum: median(rows.map((r) => r.longSum)),
  longMax: median(rows.map((r) => r.longMax)),
});

function line(label: string, rows: Run[], against?: Run[]): string {
  const s = summary(rows);
  const ratio = against ? ` (${(s.total / summary(against).total).toFixed(2)}x the baseline build)` : "";
  return `${label}: ${s.total.toFixed(0)} ms median${ratio}; server ${s.server.toFixed(0)} ms; long tasks ${s.longSum.toFixed(0)} ms (longest ${s.longMax.toFixed(0)}); runs ${rows.map((r) => r.total.toFixed(0)).join(" ")}`;
}

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

export default async function bench(args: string[]): Promise<void> {
  const positional = args.filter((a, i) => !a.startsWith("--") && !(i > 0 && ["--against", "--runs"].includes(args[i - 1])));
  const base = (positional[0] ?? process.env.BENCH_URL ?? "http://127.0.0.1:3000").replace(/\/$/, "");
  const against = option(args, "--against")?.replace(/\/$/, "");
  const runs = Number(option(args, "--runs") ?? 10);
  for (const url of [base, against].filter((u): u is string => u !== undefined)) {
    const health = await fetch(`${url}/api/health`).catch(() => null);
    if (!health?.ok) throw new Error(`no Quarry server answers at ${url} (start one with npm start, or pass its URL)`);
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
  const targets = [{ name: "this build", base }, ...(against ? [{ name: "baseline build", base: against }] : [])];
  const pages = await Promise.all(targets.map(async (t) => ({ ...t, page: await signedInPage(browser, t.base) })));
  const salt = Date.now() % 9973;
  const results = pages.map(() => ({ navigation: [] as Run[], filterChange: [] as Run[], list: [] as Run[] }));
  for (let run = 0; run < runs; run++) {
    // Interleaved, so both builds see the same machine load.
    for (const [i, { base: url, page }] of pages.entries()) {
      results[i].list.push(await measureList(page, url));
      const measured = await measureDashboard(page, url, run, salt + i * 5);
      results[i].navigation.push(measured.navigation);
      results[i].filterChange.push(measured.filterChange);
    }
  }

  console.log(`dashboard page: ${SAMPLE}, overview tab, 1440x900, headless Chromium, median of ${runs}, server result cache never hit`);
  for (const [i, { name, base: url }] of pages.entries()) {
    const baseline = i === 0 && results.length > 1 ? results[1] : undefined;
    console.log(`${name} (${url}):`);
    console.log(`  ${line("navigation -> all widgets painted   ", results[i].navigation, baseline?.navigation)}`);
    console.log(`  ${line("location change -> affected repainted", results[i].filterChange, baseline?.filterChange)}`);
    console.log(`  ${line("baseline: dashboard list page        ", results[i].list)}`);
  }
  console.log("aims (issue 31 §5): navigation -> all painted <= 600 ms, filter change -> repaint <= 200 ms; the server's share is the floor a browser cannot beat");

  if (args.includes("--profile")) {
    for (const { name, base: url, page } of pages) {
      console.log(`main-thread profile, ${name}:`);
      await profiled(page, name, "navigation", async () => {
        await page.goto(`${url}${SAMPLE}?f.date=${encodeURIComponent(dateFor(runs + 1, salt))}`);
        await page.evaluate(() => (window as unknown as Probe).__settle());
      });
      await page.locator('section[data-widget-id="location_filter"]').getByRole("button", { name: "Locations" }).click();
      const box = page.getByRole("checkbox", { name: LOCATIONS[0] });
      await box.waitFor();
      await profiled(page, name, "location change", async () => {
        await box.evaluate(async (input) => {
          const w = window as unknown as Probe;
          const done = w.__settle(performance.now());
          (input as HTMLInputElement).click();
          await done;
        });
      });
      await page.keyboard.press("Escape");
    }
  }
  await browser.close();
}
