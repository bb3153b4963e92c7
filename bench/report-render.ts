// npm run bench -- report-render: what drawing in a draw process costs (issue 41 §5). The sample dashboard as a
// PDF (both tabs, A4) and a PNG (overview tab, 1,200 px) through renderDashboardReport over a seeded embedded
// database, drawn once by the draw processes (lib/reports/draw/pool.ts, the server's way) and once in this
// process (the baseline: the same DrawJob handed to drawReport directly), the two taking turns. Both go the
// whole way: data, layout, charts, file.
//  - cold: the first render of each side (the draw process's start; ECharts, pdfkit and the fonts loaded here);
//    warm: median of RUNS more; ratio = draw process / in process, warm.
//  - event loop: the longest delay of this process's event loop during the warm renders (perf_hooks): what
//    every other request waited at worst while a report was drawn.
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Principal } from "@/lib/access/roles";
import { seedSampleDashboard } from "@/lib/dashboards/dashboards";
import { closeQueue } from "@/lib/job-queue";
import { drawReport } from "@/lib/reports/draw/job";
import { DrawPool, type ReportDrawer, drawPool } from "@/lib/reports/draw/pool";
import { withSeededDb } from "./lib/seeded-db";

const RUNS = 7;
const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const SIDES = ["draw process", "in process"] as const;
type Side = (typeof SIDES)[number];

interface Figures {
  cold: number;
  warm: number;
  /** Longest event-loop delay during the warm renders, ms. */
  loop: number;
}

export default async function bench(): Promise<void> {
  await withSeededDb("pglite", async () => {
    try {
      await compare();
    } finally {
      // Publishing the sample asked the worker for a rollup build, which opened the job queue: close it, or the bench never exits.
      await closeQueue();
    }
  });
}

async function compare(): Promise<void> {
  const dashboardId = (await seedSampleDashboard(admin)).id;
  const { renderDashboardReport } = await import("@/lib/reports/render");
  const sides: Record<Side, ReportDrawer> = { "draw process": drawPool.get(), "in process": { draw: drawReport } };
  const measure = async (format: "pdf" | "png", tab?: string): Promise<Record<Side, Figures>> => {
    const times: Record<Side, number[]> = { "draw process": [], "in process": [] };
    const loops = { "draw process": monitorEventLoopDelay({ resolution: 10 }), "in process": monitorEventLoopDelay({ resolution: 10 }) };
    // The two sides take turns, so both meet the same load on a shared machine.
    for (let i = 0; i <= RUNS; i++) {
      for (const side of SIDES) {
        drawPool.set(sides[side]);
        if (i > 0) loops[side].enable();
        const started = performance.now();
        await renderDashboardReport(admin, { dashboardId, filters: {}, format, tab });
        times[side].push(performance.now() - started);
        loops[side].disable();
      }
    }
    const figures = (side: Side): Figures => ({ cold: times[side][0], warm: median(times[side].slice(1)), loop: loops[side].max / 1e6 });
    return { "draw process": figures("draw process"), "in process": figures("in process") };
  };
  const results = { pdf: await measure("pdf"), png: await measure("png", "overview") };
  const pool = sides["draw process"];
  if (pool instanceof DrawPool) pool.close();
  drawPool.set(undefined);

  const ms = (value: number) => `${Math.round(value).toLocaleString("en-US")} ms`;
  console.log(`report render, sample dashboard, ${RUNS} warm runs (median) per side, taking turns, embedded database`);
  console.log("                       cold        warm   longest event-loop delay (warm)");
  for (const format of ["pdf", "png"] as const) {
    for (const side of SIDES) {
      const figures = results[format][side];
      console.log(`${format.toUpperCase()} ${side.padEnd(14)} ${ms(figures.cold).padStart(9)} ${ms(figures.warm).padStart(11)} ${ms(figures.loop).padStart(12)}`);
    }
    console.log(`${format.toUpperCase()} ratio (warm)      ${(results[format]["draw process"].warm / results[format]["in process"].warm).toFixed(2)}×`);
  }
}
