/**
 * One report drawn from its model: laid out, then written as a PDF or rasterised as a PNG. This is
 * what the draw process (draw-process.mjs) runs for each job, so everything that draws options a
 * manifest controls — ECharts, the layout, pdfkit, resvg — runs outside the server's process. Plain
 * data in and out (structured clone). Loaded by tsx in that process: nothing of the framework, no
 * "server-only".
 */
import { type PageSpec, type ReportModel, layoutReport } from "../layout";
import { writePdf } from "../pdf";
import { writePng } from "../png";

export interface DrawJob {
  model: ReportModel;
  format: "pdf" | "png";
  page: PageSpec;
  /** PDF pages at most. */
  maxPages: number;
  /** Tallest PNG: a taller page is cut there. */
  maxPngHeight: number;
  /** The hard limit the supervisor kills the process at; widgets stop being drawn well before it. */
  renderMs: number;
  /** The PDF's document information. */
  info: { title: string; author: string };
  /** What the server already left out (table rows past the limit), said on the first page with what drawing leaves out. */
  cut: string[];
}

export interface DrawResult {
  bytes: Uint8Array;
  pages: number;
  /** What the limits left out, in words (also printed in the report). */
  cut: string[];
}

/**
 * Widgets stop being drawn at this share of the time limit, so the report still gets written (a
 * PDF's second layout, its pages, a PNG's pixels) before the supervisor's hard limit ends the work.
 */
export const SOFT_DEADLINE_SHARE = 0.5;

export async function drawReport(job: DrawJob): Promise<DrawResult> {
  const deadline = performance.now() + job.renderMs * SOFT_DEADLINE_SHARE;
  const charts = new Map();
  const cut = [...job.cut];
  if (job.format === "png") {
    const { pages } = layoutReport(withCutNote(job.model, cut), job.page, { maxPages: 1, deadline, charts, maxY: job.maxPngHeight });
    const page = pages[0];
    if (page.height > job.maxPngHeight) {
      cut.push(`Image cut at ${job.maxPngHeight} px of ${page.height} px.`);
      page.height = job.maxPngHeight;
    }
    return { bytes: writePng(page), pages: 1, cut };
  }
  // Laid out once to learn what the limits cut, then again with that said on the first page (its charts from the first layout).
  const first = layoutReport(withCutNote(job.model, cut), job.page, { maxPages: job.maxPages, deadline, charts });
  const allCut = [...cut, ...first.cut];
  const pages = first.cut.length > 0 ? layoutReport(withCutNote(job.model, allCut), job.page, { maxPages: job.maxPages, deadline: Number.POSITIVE_INFINITY, maxBands: first.bandsDrawn, charts }).pages : first.pages;
  return { bytes: await writePdf(pages, job.info), pages: pages.length, cut: allCut };
}

function withCutNote(model: ReportModel, cut: string[]): ReportModel {
  return cut.length === 0 ? model : { ...model, lines: [...model.lines, `Left out: ${cut.join(" ")}`] };
}
