// npm run bench -- report-render: what drawing in a draw process costs (issue 41 §5). The sample dashboard as a
// PDF (both tabs, A4) and a PNG (overview tab, 1,200 px) through renderDashboardReport over a seeded embedded
// database, drawn once by the draw processes (lib/reports/draw/pool.ts, the server's way) and once in this
// process (the baseline: the same DrawJob handed to drawReport directly). Both go the whole way: data, layout,
// charts, file.
//  - cold: the first render of each side (the draw process's start; ECharts, pdfkit and the fonts loaded here);
//    warm: median of RUNS more; ratio = draw process / in process, warm.
//  - event loop: the longest delay of this process's event loop during the warm renders (perf_hooks): what
//    every other request waited at worst while a report was drawn.
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Principal } from "@/lib/access/roles";
import { seedSampleDashboard } from "@/lib/dashboards/dashboards";
import { drawReport } from "@/lib/reports/draw/job";
import { DrawPool, drawPool } from "@/lib/reports/draw/pool";
import { withSeededDb } from "./lib/seeded-db";

const RUNS = 7;
const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

interface Figures {
  cold: number;
  warm: number;
  /** Longest event-loop delay during the warm renders, ms. */
  loop: number;
}

export default async function bench(): Promise<void> {
  await withSeededDb("pglite", async () => {
    const dashboardId = (await seedSampleDashboard(admin)).id;
    const { renderDashboardReport } = await import("@/lib/reports/render");
    const measure = async (format: "pdf" | "png", tab?: string): Promise<Figures> => {
      const times: number[] = [];
      const loop = monitorEventLoopDelay({ resolution: 10 });
      for (let i = 0; i <= RUNS; i++) {
        if (i === 1) loop.enable();
        const started = performance.now();
        await renderDashboardReport(admin, { dashboardId, filters: {}, format, tab });
        times.push(performance.now() - started);
      }
      loop.disable();
      return { cold: times[0], warm: median(times.slice(1)), loop: loop.max / 1e6 };
    };
    const run = async () => ({ pdf: await measure("pdf"), png: await measure("png", "overview") });

    const pool = drawPool.get();
    const child = await run();
    if (pool instanceof DrawPool) pool.close();
    drawPool.set({ draw: drawReport });
    const inProcess = await run();
    drawPool.set(undefined);

    const ms = (value: number) => `${Math.round(value).toLocaleString("en-US")} ms`;
    console.log(`report render, sample dashboard, ${RUNS} warm runs (median), embedded database`);
    console.log("                       cold        warm   longest event-loop delay (warm)");
    for (const format of ["pdf", "png"] as const) {
      for (const [side, figures] of [["draw process", child[format]], ["in process", inProcess[format]]] as const) {
        console.log(`${format.toUpperCase()} ${side.padEnd(14)} ${ms(figures.cold).padStart(9)} ${ms(figures.warm).padStart(11)} ${ms(figures.loop).padStart(12)}`);
      }
      console.log(`${format.toUpperCase()} ratio (warm)      ${(child[format].warm / inProcess[format].warm).toFixed(2)}×`);
    }
  });
}
