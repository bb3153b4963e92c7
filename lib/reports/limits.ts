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
  /** Wall-clock time for drawing (the data's own time limit is the query budget's); widgets past it are left out. */
  renderMs: number;
  /** Tallest PNG, in pixels: a taller tab is cut there. */
  maxPngHeight: number;
}

export const DEFAULT_REPORT_LIMITS: ReportLimits = { maxPages: 50, maxTableRows: 200, renderMs: 30_000, maxPngHeight: 12_000 };

/**
 * Renders running at once in this process: two in all (the machine's cores; drawing is CPU work on
 * the event loop between awaits), one per organization, so one organization's Monday-morning batch
 * of reports waits in its own line instead of starving the others' exports and deliveries. A
 * render that has not started within 60 s fails with 503 and Retry-After.
 */
export const REPORT_QUEUE_LIMITS = { total: 2, perKey: 1, deadlineMs: 60_000 };

export const reportQueue = processSingleton("report render queue", () => new FairQueue(REPORT_QUEUE_LIMITS));
