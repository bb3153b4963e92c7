import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import * as fontkit from "fontkit";

/**
 * The fonts every report is drawn with, shipped as npm packages and registered explicitly with
 * pdfkit, resvg and ECharts' text measurement, so a report never depends on the host's fonts:
 * with none installed, resvg would draw no text at all and pdfkit would fall back to unembedded
 * Helvetica, which has no CJK glyphs (issue 29).
 *
 * - Latin, Greek, Cyrillic: Noto Sans (regular, bold, italic; TrueType, ~630 kB each).
 * - CJK: Noto Sans Hans regular (OpenType/CFF, the GB 2312 subset, 8.4 MB). It is loaded only
 *   when a report holds a CJK character: resvg reads every font buffer it is given on every
 *   render, and pdfkit embeds only the glyphs used.
 */

/** Resolved from the working directory at run time, so no bundler rewrites the lookup. */
const requireFromApp = createRequire(path.join(process.cwd(), "package.json"));

function fontFile(pkg: string, file: string): string {
  // The packages export only their font list; the files sit in fonts/ beside dist/.
  return path.join(path.dirname(requireFromApp.resolve(pkg)), "..", "fonts", file);
}

export type FontFace = "regular" | "bold" | "italic" | "cjk";

export const LATIN_FAMILY = "Noto Sans";
export const CJK_FAMILY = "Noto Sans SC";

const FILES: Record<FontFace, () => string> = {
  regular: () => fontFile("@embedpdf/fonts-latin", "NotoSans-Regular.ttf"),
  bold: () => fontFile("@embedpdf/fonts-latin", "NotoSans-Bold.ttf"),
  italic: () => fontFile("@embedpdf/fonts-latin", "NotoSans-Italic.ttf"),
  cjk: () => fontFile("@embedpdf/fonts-sc", "NotoSansHans-Regular.otf"),
};

const buffers = new Map<FontFace, Buffer>();
const faces = new Map<FontFace, fontkit.Font>();

/** Where a face's file is. */
export function fontPath(face: FontFace): string {
  return FILES[face]();
}

/** A face's file, read once per process. */
function fontBuffer(face: FontFace): Buffer {
  let buffer = buffers.get(face);
  if (!buffer) buffers.set(face, (buffer = fs.readFileSync(FILES[face]())));
  return buffer;
}

/**
 * A face parsed by fontkit, once per process: pdfkit takes it as is (a font object with `layout`),
 * so no document parses the font's tables again (that was a third of a warm one-page render).
 */
export function fontkitFace(face: FontFace): fontkit.Font {
  let font = faces.get(face);
  if (!font) {
    const created = fontkit.create(fontBuffer(face));
    // A single-font file, never a collection.
    font = "layout" in created ? created : created.fonts[0];
    faces.set(face, font);
  }
  return font;
}

/**
 * CJK ideographs, kana, hangul, CJK punctuation and full-width forms: characters Noto Sans lacks.
 * Runs of them go to the CJK face (pdfkit has no per-glyph fallback).
 */
const CJK = /[\u2E80-\u2FDF\u3000-\u30FF\u3100-\u31FF\u3200-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFFEF]|[\uD840-\uD87F][\uDC00-\uDFFF]/;
const CJK_RUNS = new RegExp(`(${CJK.source})+`, "g");

export function hasCjk(text: string): boolean {
  return CJK.test(text);
}

export interface TextRun {
  text: string;
  face: FontFace;
}

/** `text` cut into runs of one face: CJK runs in the CJK face, the rest in `latin`. */
export function textRuns(text: string, latin: Exclude<FontFace, "cjk"> = "regular"): TextRun[] {
  if (!hasCjk(text)) return text ? [{ text, face: latin }] : [];
  const runs: TextRun[] = [];
  let last = 0;
  for (const match of text.matchAll(CJK_RUNS)) {
    if (match.index > last) runs.push({ text: text.slice(last, match.index), face: latin });
    runs.push({ text: match[0], face: "cjk" });
    last = match.index + match[0].length;
  }
  if (last < text.length) runs.push({ text: text.slice(last), face: latin });
  return runs;
}

const widthCache = new Map<string, number>();

/** Advance width of `text` at `size` points (or pixels), each run measured in the face that draws it. */
export function textWidth(text: string, size: number, latin: Exclude<FontFace, "cjk"> = "regular"): number {
  const key = `${latin}\u0000${text}`;
  let unitsPerEm = widthCache.get(key);
  if (unitsPerEm === undefined) {
    unitsPerEm = 0;
    for (const run of textRuns(text, latin)) {
      const font = fontkitFace(run.face);
      unitsPerEm += font.layout(run.text).advanceWidth / font.unitsPerEm;
    }
    if (widthCache.size > 50_000) widthCache.clear();
    widthCache.set(key, unitsPerEm);
  }
  return unitsPerEm * size;
}
