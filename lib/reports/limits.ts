import { processSingleton } from "@/lib/process-singleton";
import { FairQueue } from "@/lib/query/fair-queue";

/**
 * What one report may cost (issue 29 §4), whoever asks for it: the export endpoint and scheduled
 * deliveries alike. What a report leaves out to stay within them is written in the report itself
 * (and answered as `cut`).
 */
export interface ReportLimits {
  /** Pages of one PDF; the report stops there and says so. */
  maxPages: number;
  /** Rows of one table or grid; the rest are left out with a "first N of M rows" note. */
  maxTableRows: number;
  /**
   * Wall-clock time for drawing (the data's own time limit is the query budget's): widgets not
   * drawn by half of it are left out (and the report says so); at the limit the draw process is
   * killed and the render fails with 504.
   */
  renderMs: number;
  /** Tallest PNG, in pixels: a taller tab is cut there. */
  maxPngHeight: number;
}

export const DEFAULT_REPORT_LIMITS: ReportLimits = { maxPages: 50, maxTableRows: 200, renderMs: 30_000, maxPngHeight: 12_000 };

/** What one draw process (draw/pool.ts) may hold, whatever it draws. */
export interface DrawProcessLimits {
  /** V8's old space (--max-old-space-size): the layout, ECharts' scene and pdfkit's document. */
  heapMb: number;
  /**
   * Resident memory of the whole process, watched while it draws: resvg's pixels live outside
   * V8's heap (the largest PNG, 4,000 × 12,000 px, is 192 MB of pixels before encoding).
   */
  rssMb: number;
  /** A process is replaced after this many reports, so whatever its caches hold cannot grow without end. */
  maxJobsPerProcess: number;
}

export const DRAW_PROCESS_LIMITS: DrawProcessLimits = { heapMb: 512, rssMb: 1_024, maxJobsPerProcess: 200 };

/**
 * Renders running at once in this process: two in all (the machine's cores; each draws in its own
 * draw process, see draw/pool.ts, while data loads here), one per organization, so one organization's Monday-morning batch
 * of reports waits in its own line instead of starving the others' exports and deliveries. A
 * render that has not started within 60 s fails with 503 and Retry-After.
 */
export const REPORT_QUEUE_LIMITS = { total: 2, perKey: 1, deadlineMs: 60_000 };

export const reportQueue = processSingleton("report render queue", () => new FairQueue(REPORT_QUEUE_LIMITS));
