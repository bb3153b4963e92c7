import fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { buildEchartsOption } from "@/lib/dashboards/chart-option";
import { Invalid, TimedOut, UpstreamFailed } from "@/lib/errors";
import { greyVariance, pngGreys } from "@/test/support/png";
import { chartSvg } from "../chart-svg";
import type { Block, ReportModel } from "../layout";
import { DRAW_PROCESS_LIMITS } from "../limits";
import type { DrawJob } from "./job";
import { DRAW_PROCESS_FILE, DrawPool, residentMb } from "./pool";

/*
 * The draw processes (issue 41 §5): a renderer crash, a render past its time limit and one past its
 * memory bound each end that render with an error, in a process of their own; the test process (the
 * server) goes on, and the next render is drawn by a fresh process. The pool forks the very file
 * the server forks (resolved from the working directory, as under `next start`) with plain Node and
 * no flag of the test runner's, so these runs are the production path.
 */

const pools: DrawPool[] = [];
const pool = (limits: Partial<ConstructorParameters<typeof DrawPool>[0]> = {}) => {
  const made = new DrawPool({ ...DRAW_PROCESS_LIMITS, maxProcesses: 2, ...limits });
  pools.push(made);
  return made;
};
afterAll(() => pools.forEach((p) => p.close()));

const placed = (block: Block, h = 5) => ({ id: "w", title: "Widget", x: 0, y: 0, w: 12, h, block });
const model = (block: Block, h?: number): ReportModel => ({ title: "Isolation", lines: ["Snapshot: now"], sections: [{ name: "", blocks: [placed(block, h)] }] });
const job = (m: ReportModel, format: "pdf" | "png", extra: Partial<DrawJob> = {}): DrawJob => ({
  model: m,
  format,
  page: format === "png" ? { width: 900, height: null, margin: 24 } : { width: 595.28, height: 841.89, margin: 32 },
  maxPages: 50,
  maxPngHeight: 12_000,
  renderMs: 30_000,
  info: { title: "t", author: "a" },
  cut: [],
  ...extra,
});

const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ channel: `channel ${i}`, revenue: 1_000 + i }));
const pie = (slices: number, base: Record<string, unknown> = { series: [{ type: "pie" }] }): Block => ({ kind: "chart", base, mappings: { label: "channel", value: "revenue" }, data: { columns: ["channel", "revenue"], rows: rows(slices) }, formats: {} });
const SMALL = model(pie(3));

/** The review's payload: drawn unclamped by ECharts, its SVG makes resvg panic (checked on resvg-js 2.6). */
const CRASH_OPTION = { series: [{ type: "pie", radius: ["0%", "100000000%"], label: { fontSize: 1000000, position: "inside" } }] };
function crashSvg(): string {
  const box = { width: 400, height: 300 };
  return chartSvg(buildEchartsOption(CRASH_OPTION, { label: "channel", value: "revenue" }, { columns: ["channel", "revenue"], rows: rows(3) }, { box }), box);
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

describe("draw processes", () => {
  it("forks the file the server forks, resolved from the working directory", () => {
    expect(DRAW_PROCESS_FILE).toBe(`${process.cwd()}/lib/reports/draw/draw-process.mjs`);
    expect(fs.existsSync(DRAW_PROCESS_FILE)).toBe(true);
  });

  it("a renderer crash ends that render with an error; the next render is drawn by a new process", async () => {
    const drawing = pool();
    const first = await drawing.draw(job(SMALL, "png"));
    expect(greyVariance(pngGreys(first.bytes))).toBeGreaterThan(50);
    // The unclamped SVG of the payload, placed as a vector image: the real renderer on the real input.
    const crash = drawing.draw(job(model({ kind: "vector", alt: "crash", svg: crashSvg() }), "png"));
    await expect(crash).rejects.toBeInstanceOf(UpstreamFailed);
    await expect(crash).rejects.toThrow(/report renderer stopped while drawing this report \(SIGABRT|exit code/);
    const after = await drawing.draw(job(SMALL, "png"));
    expect(greyVariance(pngGreys(after.bytes))).toBeGreaterThan(50);
    expect(drawing.started).toBe(2);
  });

  it("the same payload as a chart option is clamped to the option bounds and drawn", async () => {
    const drawing = pool();
    for (const format of ["png", "pdf"] as const) {
      const result = await drawing.draw(job(model(pie(3, CRASH_OPTION)), format));
      expect(result.bytes.length).toBeGreaterThan(1_000);
    }
    expect(drawing.started).toBe(1);
  });

  it("kills a render at its time limit while another render is drawn beside it", async () => {
    const drawing = pool();
    // Warm both processes, then take a small render's time on this machine.
    await Promise.all([drawing.draw(job(SMALL, "pdf")), drawing.draw(job(SMALL, "pdf"))]);
    const small = await timed(() => drawing.draw(job(SMALL, "pdf")));
    const renderMs = Math.max(1_000, Math.ceil(small.ms * 5));
    // A 5,000-slice pie as a PDF: tens of seconds of drawing, in one ECharts call no deadline check can split.
    const bomb = timed(() => drawing.draw(job(model(pie(5_000)), "pdf", { renderMs })).catch((error: unknown) => error));
    const beside = await timed(() => drawing.draw(job(SMALL, "pdf")));
    const stopped = await bomb;
    expect(stopped.value).toBeInstanceOf(TimedOut);
    expect(String((stopped.value as Error).message)).toMatch(/took longer than its limit of \d+(\.\d)? s and was stopped/);
    // Killed at the limit, not when the drawing would have ended; the small render finished before it.
    expect(stopped.ms).toBeGreaterThanOrEqual(renderMs);
    expect(stopped.ms).toBeLessThan(renderMs + 10 * small.ms + 1_000);
    expect(beside.ms).toBeLessThan(stopped.ms);
    expect((await drawing.draw(job(SMALL, "pdf"))).pages).toBe(1);
  }, 120_000);

  it("kills a render past the memory bound (resvg's pixels are outside V8's heap); the next one is drawn", async () => {
    const probe = pool({ maxProcesses: 1 });
    await probe.draw(job(SMALL, "png"));
    const [pid] = probe.idleProcessIds();
    const idleMb = residentMb(pid);
    expect(idleMb).toBeGreaterThan(20);
    // The tallest, widest PNG holds 4,000 × 12,000 pixels: 192 MB before it is encoded.
    const rssMb = Math.ceil(idleMb! + 96);
    const bounded = pool({ maxProcesses: 1, rssMb });
    const tall = job(model(pie(3), 1_000), "png", { page: { width: 4_000, height: null, margin: 24 } });
    const failed = bounded.draw(tall);
    await expect(failed).rejects.toBeInstanceOf(Invalid);
    await expect(failed).rejects.toThrow(`needed more than ${rssMb} MB of memory`);
    expect((await bounded.draw(job(SMALL, "png"))).pages).toBe(1);
    // Within the default bound the same image is drawn, cut at its tallest.
    const drawn = await probe.draw(tall);
    expect(drawn.cut).toEqual([expect.stringMatching(/^Image cut at 12000 px of \d+ px\.$/)]);
    expect(pngGreys(drawn.bytes).height).toBe(12_000);
  }, 120_000);
});
