import * as echarts from "echarts";
import type { ColumnFormats } from "@/lib/dashboards/column-formats";
import { type ChartData, type EchartsOption, type Mappings, buildEchartsOption } from "@/lib/dashboards/chart-option";
import { withinBounds } from "@/lib/manifest/echarts-option-bounds";
import { CJK_FAMILY, LATIN_FAMILY, hasCjk, textWidth } from "./fonts";

/**
 * One chart as vector SVG, drawn by ECharts on the server from the option the viewer builds
 * (lib/dashboards/chart-option.ts), at the size of its box in the report (1 px = 1 pt), and made
 * fit for svg-to-pdfkit and resvg. Runs in the draw process (draw/), never in the server's.
 */

/** What a chart is drawn from, as plain data (it crosses to the draw process): the option is built there, for its box. */
export interface ChartSpec {
  base: EchartsOption | undefined;
  mappings: Mappings;
  data: ChartData;
  formats: ColumnFormats;
}

let platformReady = false;

/**
 * ECharts measures text to place labels, truncate axis labels and hide overlaps. Its built-in
 * estimate knows no real font and is wrong for CJK; the shipped fonts' metrics are what the
 * report draws with, so they are what it measures with.
 */
function installMeasureText(): void {
  if (platformReady) return;
  echarts.setPlatformAPI({
    measureText(text: string, font?: string) {
      const size = Number(/(\d+(?:\.\d+)?)px/.exec(font ?? "")?.[1] ?? 12);
      const bold = /\b(bold|bolder|[6-9]00)\b/.test(font ?? "");
      return { width: textWidth(text, size, bold ? "bold" : "regular") };
    },
  });
  platformReady = true;
}

export interface ChartBox {
  width: number;
  height: number;
}

/**
 * A chart as the viewer builds it for a card of this size, its sizes and positions brought within
 * the manifest's bounds (options stored before the rule, sizes the builder computed) so no value
 * reaches the rasteriser that makes its geometry meaningless.
 */
export function drawChart(spec: ChartSpec, box: ChartBox): string {
  const option = buildEchartsOption(spec.base, spec.mappings, spec.data, { box, measureText: (text) => textWidth(text, 12), formats: spec.formats });
  return chartSvg(withinBounds(option), box);
}

/** Renders an ECharts option (already built by the viewer's builder) to an SVG document fit for the report. */
export function chartSvg(option: Record<string, unknown>, box: ChartBox): string {
  installMeasureText();
  const chart = echarts.init(null, null, { renderer: "svg", ssr: true, width: Math.max(40, Math.round(box.width)), height: Math.max(40, Math.round(box.height)) });
  try {
    const given = option.textStyle && typeof option.textStyle === "object" ? (option.textStyle as Record<string, unknown>) : {};
    // No animation: the first frame is the only one. Tooltips and toolbox have no meaning on paper.
    chart.setOption({ ...option, animation: false, tooltip: undefined, toolbox: undefined, textStyle: { ...given, fontFamily: LATIN_FAMILY } });
    return fitForPrint(chart.renderToSVGString());
  } finally {
    chart.dispose();
  }
}

/**
 * - The root's fixed width and height go (the viewBox stays), so the chart takes the box it is
 *   placed in.
 * - Text outlines painted with `paint-order: stroke` (ECharts' white halo around labels) go:
 *   svg-to-pdfkit ignores paint-order and would paint the outline over the text.
 * - Text with CJK characters is set in the CJK family (no per-glyph fallback in pdfkit).
 */
export function fitForPrint(svg: string): string {
  const root = svg.replace(/^<svg([^>]*)>/, (_, attributes: string) => `<svg${attributes.replace(/\s(width|height)="[^"]*"/g, "")}>`);
  return root.replace(/<text([^>]*)>([^<]*)<\/text>/g, (_, attributes: string, content: string) => {
    let attrs = attributes;
    if (/paint-order/.test(attrs)) {
      attrs = attrs.replace(/\s(stroke|stroke-width|stroke-linejoin|paint-order)="[^"]*"/g, "").replace(/(stroke|stroke-width|paint-order):[^;"]*;?/g, "");
    }
    if (hasCjk(decodeEntities(content))) attrs = attrs.replace(/font-family:[^;"]*/g, `font-family:${CJK_FAMILY}`);
    return `<text${attrs}>${content}</text>`;
  });
}

function decodeEntities(text: string): string {
  return text.replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n))).replace(/&#x([0-9a-f]+);/gi, (_, n: string) => String.fromCodePoint(parseInt(n, 16)));
}
