import { Resvg } from "@resvg/resvg-js";
import { CJK_FAMILY, LATIN_FAMILY, type FontFace, fontPath, hasCjk } from "./fonts";
import type { Op, Page } from "./layout";

/**
 * One page of drawing operations as a PNG: written as one SVG (charts nested as the same SVG the
 * PDF places) and rasterised by resvg with the shipped fonts only, never the host's.
 */

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);
}

const n = (v: number) => Math.round(v * 100) / 100;

function svgOf(op: Op): string {
  switch (op.kind) {
    case "text": {
      const weight = op.face === "bold" ? ' font-weight="bold"' : "";
      const style = op.face === "italic" ? ' font-style="italic"' : "";
      return `<text x="${n(op.x)}" y="${n(op.y)}" font-family="${LATIN_FAMILY}, ${CJK_FAMILY}" font-size="${n(op.size)}"${weight}${style} fill="${escapeXml(op.color)}" xml:space="preserve">${escapeXml(op.text)}</text>`;
    }
    case "rect": {
      const radius = op.radius ? ` rx="${op.radius}"` : "";
      return `<rect x="${n(op.x)}" y="${n(op.y)}" width="${n(op.w)}" height="${n(op.h)}"${radius} fill="${op.fill ? escapeXml(op.fill) : "none"}"${op.stroke ? ` stroke="${escapeXml(op.stroke)}" stroke-width="0.75"` : ""}/>`;
    }
    case "line":
      return `<line x1="${n(op.x1)}" y1="${n(op.y1)}" x2="${n(op.x2)}" y2="${n(op.y2)}" stroke="${escapeXml(op.color)}" stroke-width="${op.width}"/>`;
    case "poly":
      return `<polygon points="${op.points.map(([x, y]) => `${n(x)},${n(y)}`).join(" ")}" fill="${escapeXml(op.fill)}"/>`;
    case "svg":
      // The chart's own root becomes a nested viewport at its box.
      return op.svg.replace(/^<svg/, `<svg x="${n(op.x)}" y="${n(op.y)}" width="${n(op.w)}" height="${n(op.h)}"`);
    case "image": {
      const aspect = op.fit === "fill" ? "none" : op.fit === "cover" ? "xMidYMid slice" : "xMidYMid meet";
      return `<image x="${n(op.x)}" y="${n(op.y)}" width="${n(op.w)}" height="${n(op.h)}" preserveAspectRatio="${aspect}" href="data:${op.mime};base64,${Buffer.from(op.bytes).toString("base64")}"/>`;
    }
    case "link":
      return "";
  }
}

function pageSvg(page: Page): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${page.width}" height="${page.height}" viewBox="0 0 ${page.width} ${page.height}"><rect width="100%" height="100%" fill="#ffffff"/>${page.ops.map(svgOf).join("")}</svg>`;
}

export function writePng(page: Page): Uint8Array {
  const svg = pageSvg(page);
  // The 8 MB CJK face only when the page has CJK text: resvg reads every font file it is given on every render.
  const faces: FontFace[] = ["regular", "bold", "italic", ...(hasCjk(svg) ? ["cjk" as const] : [])];
  const font = { loadSystemFonts: false, fontFiles: faces.map(fontPath), defaultFontFamily: LATIN_FAMILY, sansSerifFamily: LATIN_FAMILY };
  const rendered = new Resvg(svg, { font, fitTo: { mode: "original" }, background: "#ffffff" }).render();
  return new Uint8Array(rendered.asPng());
}
