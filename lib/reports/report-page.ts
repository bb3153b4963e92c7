import type { PageSpec } from "./layout";

/**
 * The paper a report is drawn on, apart from what it shows (report-model.ts): a PDF's page size and
 * orientation, or a PNG's width. The draw process cuts the model into pages of this size (layout.ts).
 */

export type Paper = "a4" | "letter";
export type Orientation = "portrait" | "landscape";

export interface PageRequest {
  format: "pdf" | "png";
  /** PDF page size and orientation (A4 portrait by default). */
  paper?: Paper;
  orientation?: Orientation;
  /** PNG width in pixels (1,200 by default, 320–4,000). */
  width?: number;
}

/** Page sizes in PDF points, short side first. */
const PAPER: Record<Paper, [number, number]> = { a4: [595.28, 841.89], letter: [612, 792] };

/** A PDF's page in its orientation; a PNG is one page as tall as its content. */
export function reportPage(request: PageRequest): PageSpec {
  if (request.format === "png") return { width: Math.round(Math.min(4000, Math.max(320, request.width ?? 1200))), height: null, margin: 24 };
  const [short, long] = PAPER[request.paper ?? "a4"];
  const landscape = request.orientation === "landscape";
  return { width: landscape ? long : short, height: landscape ? short : long, margin: 32 };
}

/** The file's name: the dashboard's slug and the snapshot's day ("sales-2026-11-28.pdf"). */
export function reportFilename(slug: string, now: Date, format: "pdf" | "png"): string {
  return `${slug}-${now.toISOString().slice(0, 10)}.${format}`;
}
