import { GRID_COLUMNS } from "@/lib/manifest/grid";
import { type FontFace, textWidth } from "./fonts";
import { type ChartSpec, drawChart } from "./chart-svg";

/**
 * The report's layout, independent of its output: a model of the dashboard (header, tabs as
 * sections, widgets at their manifest grid positions) is cut into pages of drawing operations,
 * which pdf.ts writes as a vector PDF and png.ts as one SVG rasterised by resvg. Text is measured
 * with the shipped fonts (fonts.ts), so wrapping and truncation are the same in both. The model
 * is plain data (structured-clone safe): the server builds it and the draw process (draw/) lays
 * it out.
 */

export type LatinFace = Exclude<FontFace, "cjk">;
export interface Span {
  text: string;
  face: LatinFace;
  link?: string;
}
export interface Paragraph {
  kind: "heading" | "paragraph" | "item";
  /** Heading level (1–6) or list depth (1…). */
  level: number;
  /** "•" or "3." for list items. */
  bullet?: string;
  spans: Span[];
}
export type Tone = "good" | "bad" | "neutral";

export type Block =
  /** The option is built (in the draw process) for the box the chart gets, as the viewer builds it for its card. */
  | ({ kind: "chart" } & ChartSpec)
  | { kind: "kpi"; value: string; delta?: { text: string; direction: "up" | "down" | "flat"; tone: Tone; comparison?: string } }
  | { kind: "table"; columns: string[]; numeric: boolean[]; rows: string[][]; total: number; note?: string }
  | { kind: "text"; paragraphs: Paragraph[]; align: "left" | "center" | "right"; color?: string; size: number }
  | { kind: "image"; alt: string; bytes: Uint8Array; mime: "image/png" | "image/jpeg"; fit: string }
  /** An SVG image of this site's own (public/), drawn as vectors like a chart. */
  | { kind: "vector"; alt: string; svg: string }
  | { kind: "message"; text: string };

export interface PlacedBlock {
  id: string;
  /** The widget's name, shown as its card title (none for text bands). */
  title?: string;
  x: number;
  y: number;
  w: number;
  h: number;
  block: Block;
}

export interface Section {
  name: string;
  blocks: PlacedBlock[];
}

export interface ReportModel {
  title: string;
  /** "Snapshot: …", "Filters: …", "Scope: …" lines. */
  lines: string[];
  header?: { blocks: PlacedBlock[]; background?: string };
  footer?: { blocks: PlacedBlock[]; background?: string };
  sections: Section[];
}

export type Op =
  | { kind: "text"; x: number; y: number; text: string; size: number; face: LatinFace; color: string; link?: string }
  | { kind: "rect"; x: number; y: number; w: number; h: number; fill?: string; stroke?: string; radius?: number }
  | { kind: "line"; x1: number; y1: number; x2: number; y2: number; color: string; width: number }
  | { kind: "poly"; points: [number, number][]; fill: string }
  | { kind: "svg"; x: number; y: number; w: number; h: number; svg: string }
  | { kind: "image"; x: number; y: number; w: number; h: number; bytes: Uint8Array; mime: string; fit: string }
  | { kind: "link"; x: number; y: number; w: number; h: number; url: string };

export interface Page {
  width: number;
  height: number;
  ops: Op[];
}

export interface PageSpec {
  width: number;
  /** null: one page as tall as its content (PNG). */
  height: number | null;
  margin: number;
}

export interface LayoutLimits {
  maxPages: number;
  /** Wall-clock deadline (performance.now()) after which no further widget is drawn. */
  deadline: number;
  /**
   * Bands of widgets drawn at most, over all sections: a second layout of the same model stops
   * where the first one's deadline stopped it (`bandsDrawn`), so what it says was left out is.
   */
  maxBands?: number;
  /**
   * Nothing is drawn below this y (a PNG's tallest image): a box reaching past it ends there. A
   * chart hundreds of thousands of pixels tall is what made resvg panic, and no one would see it.
   */
  maxY?: number;
  /** Chart SVGs by block and size, shared between layouts of one model so a second layout draws no chart again. */
  charts?: Map<PlacedBlock, { width: number; height: number; svg: string }>;
}

const GAP = 8;
const INK = "#0f172a";
const MUTED = "#64748b";
const RULE = "#e2e8f0";
const TONES: Record<Tone, string> = { good: "#15803d", bad: "#b91c1c", neutral: MUTED };
const LINE = 1.35;
const ASCENT = 0.8;

// ------------------------------------------------------------------ text

interface Word {
  text: string;
  face: LatinFace;
  link?: string;
  width: number;
  space: number;
}
export interface LineRun {
  text: string;
  face: LatinFace;
  link?: string;
  x: number;
  width: number;
}

/** Spans cut into words: at spaces, and between CJK characters (which break anywhere). */
function words(spans: Span[], size: number): Word[] {
  const out: Word[] = [];
  for (const span of spans) {
    for (const match of span.text.matchAll(/[\u2E80-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF\uFF00-\uFFEF]|[^\s\u2E80-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF\uFF00-\uFFEF]+|\s+/g)) {
      const piece = match[0];
      if (/^\s+$/.test(piece)) {
        if (out.length > 0) out[out.length - 1].space = textWidth(" ", size, span.face);
        continue;
      }
      out.push({ text: piece, face: span.face, link: span.link, width: textWidth(piece, size, span.face), space: 0 });
    }
  }
  return out;
}

/** Greedy line breaking of styled spans into lines no wider than `width`; a word wider than a line is cut with an ellipsis. */
function wrapSpans(spans: Span[], size: number, width: number): LineRun[][] {
  const lines: LineRun[][] = [];
  let line: LineRun[] = [];
  let x = 0;
  let pendingSpace = 0;
  for (const word of words(spans, size)) {
    const start = line.length === 0 ? 0 : x + pendingSpace;
    if (line.length > 0 && start + word.width > width) {
      lines.push(line);
      line = [];
      x = 0;
    }
    const at = line.length === 0 ? 0 : x + pendingSpace;
    const text = word.width > width ? fitText(word.text, size, width, word.face) : word.text;
    const w = word.width > width ? textWidth(text, size, word.face) : word.width;
    const previous = line[line.length - 1];
    // Adjacent words of one style and link are one run (one text object, and a copyable line in pdftotext).
    if (previous && previous.face === word.face && previous.link === word.link) {
      previous.text += (at > previous.x + previous.width ? " " : "") + text;
      previous.width = at + w - previous.x;
    } else {
      line.push({ text, face: word.face, link: word.link, x: at, width: w });
    }
    x = at + w;
    pendingSpace = word.space;
  }
  if (line.length > 0) lines.push(line);
  return lines;
}

/** `text` cut to fit `width`, ending in an ellipsis when cut. */
function fitText(text: string, size: number, width: number, face: LatinFace = "regular"): string {
  if (textWidth(text, size, face) <= width) return text;
  const chars = [...text];
  let low = 0;
  let high = chars.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (textWidth(chars.slice(0, mid).join("") + "…", size, face) <= width) low = mid;
    else high = mid - 1;
  }
  return chars.slice(0, low).join("") + "…";
}

// ------------------------------------------------------------------ pages

/** Where drawing is: the page being filled and the next free y on it. */
class Cursor {
  readonly pages: Page[] = [];
  /** Index of the page drawn on: a table beside other widgets may already have added the pages after it. */
  current = -1;
  y = 0;
  full = false;
  /** Bands of widgets drawn so far; where the deadline stopped drawing, when it did. */
  bands = 0;
  stoppedAt: number | undefined;
  constructor(
    readonly spec: PageSpec,
    readonly limits: LayoutLimits,
    readonly cut: string[],
  ) {
    this.newPage();
  }
  get top(): number {
    return this.spec.margin;
  }
  get bottom(): number {
    return this.spec.height === null ? Number.POSITIVE_INFINITY : this.spec.height - this.spec.margin;
  }
  get contentWidth(): number {
    return this.spec.width - 2 * this.spec.margin;
  }
  /** Moves to the next page (adding it when there is none yet); false (and drawing stops) past the page limit. */
  newPage(): boolean {
    if (this.full) return false;
    if (this.current + 1 < this.pages.length) {
      this.current++;
      this.y = this.top;
      return true;
    }
    if (this.pages.length >= this.limits.maxPages) {
      this.cut.push(`Page limit reached: the report stops after ${this.limits.maxPages} pages.`);
      this.full = true;
      return false;
    }
    this.pages.push({ width: this.spec.width, height: this.spec.height ?? 0, ops: [] });
    this.current = this.pages.length - 1;
    this.y = this.top;
    return true;
  }
  /** Room for `height` on this page, or a new page; false when no page may be added. */
  ensure(height: number): boolean {
    if (this.full) return false;
    if (this.y + height <= this.bottom || this.y <= this.top) return true;
    return this.newPage();
  }
  draw(op: Op): void {
    if (!this.full) this.pages[this.current].ops.push(op);
  }
}

function textOp(x: number, top: number, text: string, size: number, face: LatinFace, color: string, link?: string): Op {
  return { kind: "text", x, y: top + size * ASCENT + (size * (LINE - 1)) / 2, text, size, face, color, ...(link ? { link } : {}) };
}

/** Draws wrapped lines from `top`; answers the y below them. Lines past `maxBottom` are dropped. */
function drawLines(cursor: Cursor, lines: LineRun[][], x: number, top: number, width: number, size: number, color: string, align: "left" | "center" | "right", maxBottom = Number.POSITIVE_INFINITY): number {
  let y = top;
  for (const line of lines) {
    if (y + size * LINE > maxBottom) break;
    const used = line.length ? line[line.length - 1].x + line[line.length - 1].width : 0;
    const offset = align === "center" ? (width - used) / 2 : align === "right" ? width - used : 0;
    for (const run of line) {
      cursor.draw(textOp(x + offset + run.x, y, run.text, size, run.face, run.link ? "#1d4ed8" : color, run.link));
      if (run.link) cursor.draw({ kind: "link", x: x + offset + run.x, y, w: run.width, h: size * LINE, url: run.link });
    }
    y += size * LINE;
  }
  return y;
}

// ------------------------------------------------------------------ widgets

const TITLE_SIZE = 9.5;
const PAD = 8;

interface Geometry {
  colWidth: number;
  rowHeight: number;
  left: number;
}

function boxOf(g: Geometry, b: PlacedBlock, top: number) {
  const x = g.left + (Math.min(b.x, GRID_COLUMNS - 1) * g.colWidth);
  const w = Math.min(b.w, GRID_COLUMNS - Math.min(b.x, GRID_COLUMNS - 1)) * g.colWidth - GAP;
  return { x, y: top, w, h: b.h * g.rowHeight - GAP };
}

function card(cursor: Cursor, box: { x: number; y: number; w: number; h: number }, title: string | undefined, border = true): number {
  if (border) cursor.draw({ kind: "rect", ...box, fill: "#ffffff", stroke: RULE, radius: 4 });
  if (!title) return box.y + PAD;
  cursor.draw(textOp(box.x + PAD, box.y + PAD - 2, fitText(title, TITLE_SIZE, box.w - 2 * PAD, "bold"), TITLE_SIZE, "bold", INK));
  return box.y + PAD + TITLE_SIZE * LINE;
}

function drawKpi(cursor: Cursor, box: { x: number; y: number; w: number; h: number }, top: number, block: Extract<Block, { kind: "kpi" }>): void {
  const room = box.y + box.h - top - PAD;
  const size = Math.max(12, Math.min(26, room * 0.45, ((box.w - 2 * PAD) / Math.max(1, textWidth(block.value, 1, "bold"))) * 0.95));
  cursor.draw(textOp(box.x + PAD, top, block.value, size, "bold", INK));
  if (!block.delta) return;
  const y = top + size * LINE;
  const small = 8.5;
  const color = TONES[block.delta.tone];
  const mid = y + (small * LINE) / 2;
  const s = small * 0.35;
  const ax = box.x + PAD + s;
  const points: [number, number][] =
    block.delta.direction === "up" ? [[ax - s, mid + s], [ax + s, mid + s], [ax, mid - s]] : block.delta.direction === "down" ? [[ax - s, mid - s], [ax + s, mid - s], [ax, mid + s]] : [[ax - s, mid - s], [ax + s, mid - s], [ax + s, mid + s], [ax - s, mid + s]];
  cursor.draw({ kind: "poly", points, fill: color });
  const text = fitText(block.delta.text, small, box.w - 2 * PAD - 3 * s, "regular");
  const x = ax + 2 * s;
  cursor.draw(textOp(x, y, text, small, "regular", color));
  if (block.delta.comparison) {
    const after = x + textWidth(text, small) + 4;
    cursor.draw(textOp(after, y, fitText(block.delta.comparison, small, Math.max(0, box.x + box.w - PAD - after)), small, "regular", MUTED));
  }
}

function drawText(cursor: Cursor, box: { x: number; y: number; w: number; h: number }, top: number, block: Extract<Block, { kind: "text" }>, color = INK): void {
  let y = top;
  const bottom = box.y + box.h - 2;
  for (const p of block.paragraphs) {
    const size = p.kind === "heading" ? block.size * ([1.6, 1.35, 1.2, 1.1, 1, 1][p.level - 1] ?? 1) : block.size;
    const indent = p.kind === "item" ? 12 * p.level : 0;
    const width = box.w - 2 * PAD - indent;
    if (p.kind === "item" && p.bullet) cursor.draw(textOp(box.x + PAD + indent - 10, y, p.bullet, size, "regular", block.color ?? color));
    const lines = wrapSpans(p.spans.map((s) => (p.kind === "heading" ? { ...s, face: "bold" as const } : s)), size, width);
    y = drawLines(cursor, lines, box.x + PAD + indent, y, width, size, block.color ?? color, block.align, bottom);
    y += p.kind === "item" ? 1 : size * 0.4;
    if (y > bottom) break;
  }
}

/** The height drawText takes for `block` in a box `width` wide (its padding excluded). */
function textHeight(block: Extract<Block, { kind: "text" }>, width: number): number {
  let h = 0;
  block.paragraphs.forEach((p, i) => {
    const size = p.kind === "heading" ? block.size * ([1.6, 1.35, 1.2, 1.1, 1, 1][p.level - 1] ?? 1) : block.size;
    const indent = p.kind === "item" ? 12 * p.level : 0;
    h += wrapSpans(p.spans, size, width - indent).length * size * LINE + (i < block.paragraphs.length - 1 ? (p.kind === "item" ? 1 : size * 0.4) : 0);
  });
  return h;
}

function drawImage(cursor: Cursor, box: { x: number; y: number; w: number; h: number }, top: number, block: Extract<Block, { kind: "image" }>): void {
  cursor.draw({ kind: "image", x: box.x + PAD, y: top, w: box.w - 2 * PAD, h: Math.max(8, box.y + box.h - top - PAD), bytes: block.bytes, mime: block.mime, fit: block.fit });
}

const CELL = 8;
const ROW = CELL * 2.1;

/**
 * Column widths: each column's natural width (the widest of its header and first rows). When they
 * do not all fit, numbers keep theirs (a cut figure would be a wrong one) and text columns share
 * what is left, in proportion, cut with an ellipsis; spare width is shared out in proportion.
 */
function columnWidths(block: Extract<Block, { kind: "table" }>, width: number): number[] {
  const sample = block.rows.slice(0, 200);
  const natural = block.columns.map((c, i) => Math.max(textWidth(c, CELL, "bold"), ...sample.map((r) => textWidth(r[i] ?? "", CELL))) + 8);
  const total = natural.reduce((a, b) => a + b, 0) || 1;
  if (total <= width) return natural.map((n) => (n / total) * width);
  const numbers = natural.reduce((sum, n, i) => sum + (block.numeric[i] ? n : 0), 0);
  if (numbers >= width * 0.8) return natural.map((n) => (n / total) * width);
  const texts = total - numbers || 1;
  return natural.map((n, i) => (block.numeric[i] ? n : (n / texts) * (width - numbers)));
}

/**
 * A table flows from its box down the page and on over as many pages as it needs, its header
 * repeated on each; answers where it ends (on the cursor's page). Rows past the report's row
 * limit were already cut, and the note says so.
 */
function drawTable(cursor: Cursor, box: { x: number; y: number; w: number; h: number }, top: number, block: Extract<Block, { kind: "table" }>): number {
  const x = box.x + PAD;
  const width = box.w - 2 * PAD;
  const widths = columnWidths(block, width);
  const header = (y: number) => {
    cursor.draw({ kind: "rect", x, y, w: width, h: ROW, fill: "#f1f5f9" });
    let cx = x;
    block.columns.forEach((c, i) => {
      const text = fitText(c, CELL, widths[i] - 6, "bold");
      const tx = block.numeric[i] ? cx + widths[i] - 3 - textWidth(text, CELL, "bold") : cx + 3;
      cursor.draw(textOp(tx, y + (ROW - CELL * LINE) / 2, text, CELL, "bold", INK));
      cx += widths[i];
    });
    return y + ROW;
  };
  let y = header(top);
  for (const row of block.rows) {
    if (y + ROW > cursor.bottom) {
      if (!cursor.newPage()) return cursor.y;
      y = header(cursor.top);
    }
    let cx = x;
    row.forEach((cell, i) => {
      const text = fitText(cell, CELL, widths[i] - 6);
      const tx = block.numeric[i] ? cx + widths[i] - 3 - textWidth(text, CELL) : cx + 3;
      cursor.draw(textOp(tx, y + (ROW - CELL * LINE) / 2, text, CELL, "regular", INK));
      cx += widths[i];
    });
    cursor.draw({ kind: "line", x1: x, y1: y + ROW, x2: x + width, y2: y + ROW, color: RULE, width: 0.5 });
    y += ROW;
  }
  if (block.note) {
    if (y + ROW > cursor.bottom) {
      if (!cursor.newPage()) return cursor.y;
      y = cursor.top;
    }
    cursor.draw(textOp(x, y + 3, block.note, CELL, "italic", MUTED));
    y += ROW;
  }
  return y + PAD;
}

/** Draws one widget in its box (a table may flow on to later pages); answers the y where it ends, on the cursor's page. */
/** A chart's SVG for its box: from the layout's cache when an earlier layout of the model drew it at this size. */
function chartFor(cursor: Cursor, placed: PlacedBlock, spec: ChartSpec, size: { width: number; height: number }): string {
  const cached = cursor.limits.charts?.get(placed);
  if (cached && cached.width === size.width && cached.height === size.height) return cached.svg;
  const svg = drawChart(spec, size);
  cursor.limits.charts?.set(placed, { ...size, svg });
  return svg;
}

function drawBlock(cursor: Cursor, box: { x: number; y: number; w: number; h: number }, placed: PlacedBlock): number {
  const { block } = placed;
  if (block.kind === "table") {
    // No card: a table's height is its rows', on as many pages as they take.
    const top = card(cursor, box, placed.title, false);
    return drawTable(cursor, box, top, block);
  }
  const top = card(cursor, box, placed.title);
  const inner = { w: box.w - 2 * PAD, h: box.y + box.h - top - PAD / 2 };
  switch (block.kind) {
    case "chart": {
      const size = { width: box.w - PAD, height: inner.h };
      cursor.draw({ kind: "svg", x: box.x + PAD / 2, y: top, w: size.width, h: size.height, svg: chartFor(cursor, placed, block, size) });
      break;
    }
    case "kpi":
      drawKpi(cursor, box, top, block);
      break;
    case "text":
      drawText(cursor, box, top, block);
      break;
    case "image":
      drawImage(cursor, box, top, block);
      break;
    case "vector":
      cursor.draw({ kind: "svg", x: box.x + PAD, y: top, w: box.w - 2 * PAD, h: inner.h, svg: block.svg });
      break;
    case "message":
      drawLines(cursor, wrapSpans([{ text: block.text, face: "italic" }], 9, inner.w), box.x + PAD, top, inner.w, 9, MUTED, "left", box.y + box.h);
      break;
  }
  return box.y + box.h + GAP;
}

/**
 * Widgets whose grid rows overlap form a band, laid out together: a band starts on a new page
 * when it does not fit on this one (unless it is taller than a page), and the next band starts
 * below the lowest widget of this one, tables that flowed on included.
 */
function bands(blocks: PlacedBlock[]): PlacedBlock[][] {
  const sorted = [...blocks].sort((a, b) => a.y - b.y || a.x - b.x);
  const out: PlacedBlock[][] = [];
  let end = -1;
  for (const b of sorted) {
    if (out.length > 0 && b.y < end) out[out.length - 1].push(b);
    else out.push([b]);
    end = Math.max(b.y < end ? end : 0, b.y + b.h);
  }
  return out;
}

function drawGrid(cursor: Cursor, g: Geometry, blocks: PlacedBlock[]): void {
  let left = blocks.length;
  for (const band of bands(blocks)) {
    if (cursor.stoppedAt !== undefined || cursor.bands >= (cursor.limits.maxBands ?? Number.POSITIVE_INFINITY) || performance.now() > cursor.limits.deadline) {
      cursor.stoppedAt ??= cursor.bands;
      cursor.cut.push(`Render time limit reached: ${left} widget(s) left out.`);
      return;
    }
    cursor.bands++;
    left -= band.length;
    const minY = Math.min(...band.map((b) => b.y));
    // A table flows on over pages, so it needs room for its title and first rows only, not its grid box.
    const height = Math.max(...band.map((b) => (b.y - minY) * g.rowHeight + (b.block.kind === "table" ? Math.min(b.h * g.rowHeight, PAD + TITLE_SIZE * LINE + 5 * ROW) : b.h * g.rowHeight)));
    if (!cursor.ensure(Math.min(height, cursor.bottom - cursor.top))) return;
    const top = cursor.y;
    const first = cursor.current;
    let end = { page: first, y: top };
    for (const b of band) {
      // Every widget of the band starts on its first page, whatever a table beside it added.
      cursor.current = first;
      cursor.y = top;
      const box = boxOf(g, b, top + (b.y - minY) * g.rowHeight);
      box.h = Math.max(20, Math.min(box.h, cursor.bottom - box.y, (cursor.limits.maxY ?? Number.POSITIVE_INFINITY) - box.y));
      const y = drawBlock(cursor, box, b);
      if (cursor.current > end.page || (cursor.current === end.page && y > end.y)) end = { page: cursor.current, y };
      if (cursor.full) return;
    }
    cursor.current = end.page;
    cursor.y = end.y;
  }
}

/** The whole report as pages of drawing operations, what was cut on the way, and the bands drawn before the deadline stopped drawing (if it did). */
export function layoutReport(model: ReportModel, spec: PageSpec, limits: LayoutLimits): { pages: Page[]; cut: string[]; bandsDrawn?: number } {
  const cut: string[] = [];
  const cursor = new Cursor(spec, limits, cut);
  const width = cursor.contentWidth;
  // 12 grid columns across the page; a grid row about as tall, relative to the width, as on a screen of 1,200 px,
  // and at least 52 pt, so a chart four rows high is still tall enough to read on a portrait page.
  const g: Geometry = { colWidth: (width + GAP) / GRID_COLUMNS, rowHeight: Math.max(52, width * 0.072), left: spec.margin };
  const header = () => {
    cursor.draw(textOp(spec.margin, cursor.y, fitText(model.title, 18, width, "bold"), 18, "bold", INK));
    cursor.y += 18 * LINE + 2;
    for (const line of model.lines) {
      cursor.y = drawLines(cursor, wrapSpans([{ text: line, face: "regular" }], 8.5, width), spec.margin, cursor.y, width, 8.5, MUTED, "left");
    }
    cursor.draw({ kind: "line", x1: spec.margin, y1: cursor.y + 4, x2: spec.margin + width, y2: cursor.y + 4, color: RULE, width: 1 });
    cursor.y += 10;
  };
  const band = (part: ReportModel["header"]) => {
    if (!part || part.blocks.length === 0) return;
    const texts = part.blocks.flatMap((b) => (b.block.kind === "text" ? [b.block] : []));
    // As tall as its text wrapped across the page, with a little air.
    const height = Math.max(24, ...texts.map((t) => textHeight(t, width - 2 * PAD) + 2 * PAD));
    if (!cursor.ensure(height)) return;
    if (part.background) cursor.draw({ kind: "rect", x: spec.margin, y: cursor.y, w: width, h: height, fill: part.background, radius: 4 });
    for (const text of texts) {
      const box = { x: spec.margin, y: cursor.y, w: width, h: height };
      drawText(cursor, box, cursor.y + (height - textHeight(text, width - 2 * PAD)) / 2, text);
    }
    cursor.y += height + GAP;
  };
  header();
  model.sections.forEach((section, i) => {
    if (cursor.full) return;
    if (i > 0 && spec.height !== null && !cursor.newPage()) return;
    band(model.header);
    if (model.sections.length > 1 || section.name) {
      cursor.ensure(14 * LINE + 6);
      cursor.draw(textOp(spec.margin, cursor.y, fitText(section.name, 13, width, "bold"), 13, "bold", INK));
      cursor.y += 13 * LINE + 6;
    }
    drawGrid(cursor, g, section.blocks);
    band(model.footer);
  });
  // One page as tall as what was drawn (PNG).
  if (spec.height === null) cursor.pages[0].height = Math.ceil(cursor.y + spec.margin);
  return { pages: cursor.pages, cut, ...(cursor.stoppedAt !== undefined ? { bandsDrawn: cursor.stoppedAt } : {}) };
}
