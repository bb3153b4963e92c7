import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import * as queryRoute from "@/app/api/v1/custom-dashboards/[id]/query/route";
import type { Principal } from "@/lib/access/roles";
import { chartType } from "@/lib/dashboards/chart-option";
import { seedSampleDashboard } from "@/lib/dashboards/dashboards";
import { viewColumnFormats, type ViewManifest } from "@/lib/dashboards/wiring";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { call, tokenFor } from "@/test/helpers";
import { type ChartBox, drawChart } from "./chart-svg";
import { textWidth } from "./fonts";

/*
 * Charts label themselves (issue 44 §4): every chart of the sample dashboard, on its real data, drawn as the reports
 * draw it (ECharts SSR to SVG, the shipped fonts' metrics) in the box it gets on a phone, on a desktop and on an A4
 * page. No label is cut ('…'), none leaves the chart's box, and no two overlap (boxes read from the SVG).
 */

const SAMPLE = fs.readFileSync(path.join(process.cwd(), "docs/manifests/sample-dashboard.yaml"), "utf8");
const parsed = parseDashboardYaml(SAMPLE);
if (!parsed.ok) throw new Error("the sample dashboard does not parse");
const view: ViewManifest = { manifest: parsed.dashboard.manifest, widgets: parsed.dashboard.widgets };
const charts = view.widgets.filter((w) => w.spec.component === "echarts");

const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };

/**
 * A chart's box in each medium, from the widget's grid size: the viewer's 76 px rows and 14 px gaps (components/dashboards/
 * dashboard-grid.tsx), a 1,440 px desktop's 1,392 px grid or a 390 px phone's single column, less the card's title and
 * padding; an A4 portrait page as lib/reports/layout.ts places it (32 pt margins, 12 columns, 52 pt rows, 8 pt gaps).
 */
const MEDIA: Record<string, (w: number, h: number) => ChartBox> = {
  phone: (_w, h) => ({ width: 334, height: h * 76 + (h - 1) * 14 - 48 }),
  desktop: (w, h) => ({ width: Math.round(w * ((1392 + 14) / 12) - 14 - 24), height: h * 76 + (h - 1) * 14 - 48 }),
  a4: (w, h) => ({ width: Math.round(w * ((595.28 - 64 + 8) / 12) - 16), height: Math.round(h * 52 - 8 - 8 - 9.5 * 1.35 - 4) }),
};

type Point = [number, number];
interface Label {
  text: string;
  corners: Point[];
}

/** a b c d e f of an SVG transform list (translate, rotate, scale, matrix), composed left to right. */
function matrixOf(transform: string): number[] {
  let m = [1, 0, 0, 1, 0, 0];
  const times = (n: number[]) => {
    m = [m[0] * n[0] + m[2] * n[1], m[1] * n[0] + m[3] * n[1], m[0] * n[2] + m[2] * n[3], m[1] * n[2] + m[3] * n[3], m[0] * n[4] + m[2] * n[5] + m[4], m[1] * n[4] + m[3] * n[5] + m[5]];
  };
  for (const [, fn, args] of transform.matchAll(/(\w+)\(([^)]*)\)/g)) {
    const v = args.split(/[\s,]+/).filter(Boolean).map(Number);
    if (fn === "matrix") times(v);
    else if (fn === "translate") times([1, 0, 0, 1, v[0], v[1] ?? 0]);
    else if (fn === "scale") times([v[0], 0, 0, v[1] ?? v[0], 0, 0]);
    else if (fn === "rotate") {
      const r = (v[0] * Math.PI) / 180;
      times([Math.cos(r), Math.sin(r), -Math.sin(r), Math.cos(r), 0, 0]);
    }
  }
  return m;
}

const decode = (text: string) =>
  text.replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n))).replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'");

/** Every text of the SVG with the corners of its box on the page, measured in the shipped fonts as it was laid out. */
function labelsOf(svg: string): Label[] {
  const labels: Label[] = [];
  for (const [, attributes, raw] of svg.matchAll(/<text([^>]*)>([^<]*)<\/text>/g)) {
    const text = decode(raw);
    if (!text.trim()) continue;
    const attr = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(attributes)?.[1];
    const size = Number(/font-size:\s*([\d.]+)px/.exec(attributes)?.[1] ?? 12);
    const bold = /font-weight:\s*(bold|[6-9]00)/.test(attributes);
    const width = textWidth(text, size, bold ? "bold" : "regular");
    const anchor = attr("text-anchor") ?? "start";
    const baseline = attr("dominant-baseline") ?? "alphabetic";
    const x0 = Number(attr("x") ?? 0) - (anchor === "middle" ? width / 2 : anchor === "end" ? width : 0);
    const y0 = Number(attr("y") ?? 0) - (baseline === "central" || baseline === "middle" ? size / 2 : baseline === "hanging" || baseline === "text-before-edge" ? 0 : size * 0.8);
    const m = matrixOf(attr("transform") ?? "");
    const at = ([x, y]: Point): Point => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
    labels.push({ text, corners: [at([x0, y0]), at([x0 + width, y0]), at([x0 + width, y0 + size]), at([x0, y0 + size])] });
  }
  return labels;
}

/** Whether two convex quadrilaterals overlap by more than `slack` px (separating axis test). */
function overlap(a: Point[], b: Point[], slack = 1): boolean {
  for (const polygon of [a, b]) {
    for (let i = 0; i < polygon.length; i++) {
      const [x1, y1] = polygon[i];
      const [x2, y2] = polygon[(i + 1) % polygon.length];
      const length = Math.hypot(x2 - x1, y2 - y1) || 1;
      const normal: Point = [(y1 - y2) / length, (x2 - x1) / length];
      const project = (p: Point[]) => p.map(([x, y]) => x * normal[0] + y * normal[1]);
      const pa = project(a);
      const pb = project(b);
      if (Math.max(...pa) - slack <= Math.min(...pb) || Math.max(...pb) - slack <= Math.min(...pa)) return false;
    }
  }
  return true;
}

/** What is wrong with a drawn chart's labels, as readable lines (none: they read well). */
function labelProblems(svg: string, box: ChartBox): string[] {
  const labels = labelsOf(svg);
  const problems: string[] = [];
  for (const label of labels) {
    if (/…|\.\.\./.test(label.text)) problems.push(`'${label.text}' is cut`);
    const outside = label.corners.some(([x, y]) => x < -1 || y < -1 || x > box.width + 1 || y > box.height + 1);
    if (outside) problems.push(`'${label.text}' leaves the chart's box`);
  }
  for (let i = 0; i < labels.length; i++) {
    for (let j = i + 1; j < labels.length; j++) {
      if (overlap(labels[i].corners, labels[j].corners)) problems.push(`'${labels[i].text}' overlaps '${labels[j].text}'`);
    }
  }
  return problems;
}

let rows: Record<string, { columns: string[]; rows: Record<string, unknown>[] }>;

beforeAll(async () => {
  const id = (await seedSampleDashboard(admin)).id;
  const token = await tokenFor("acme", "admin");
  const res = await call(queryRoute.POST, "POST", { token, params: { id }, body: { widget_ids: charts.map((w) => w.metadata.id) } });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  rows = res.json.widgets;
}, 180_000);

describe("the sample dashboard's chart labels (issue 44 §4)", () => {
  it("the checks can fail: a label cut to '…' and two labels on top of each other are found", () => {
    const svg = `<svg><text dominant-baseline="central" text-anchor="middle" transform="translate(50 70)" style="font-size:12px">2026-…</text><text text-anchor="start" x="10" y="30" style="font-size:12px">Oct 1</text><text text-anchor="start" x="14" y="32" style="font-size:12px">Oct 2</text></svg>`;
    expect(labelProblems(svg, { width: 100, height: 100 })).toEqual(["'2026-…' is cut", "'Oct 1' overlaps 'Oct 2'"]);
    // Turned labels side by side do not overlap although their upright boxes would.
    const turned = (x: number) => `<text text-anchor="end" dominant-baseline="central" transform="translate(${x} 150) rotate(-45)" style="font-size:12px">Manhattan Flagship</text>`;
    expect(labelProblems(`<svg>${turned(150)}${turned(170)}</svg>`, { width: 300, height: 300 })).toEqual([]);
    // …and a label past the chart's edge is found.
    expect(labelProblems(`<svg>${turned(20)}</svg>`, { width: 300, height: 300 })).toEqual(["'Manhattan Flagship' leaves the chart's box"]);
  });

  const cases = charts.flatMap((widget: WidgetManifest) => Object.keys(MEDIA).map((medium) => [widget.metadata.id, medium] as const));
  it.each(cases)("%s on a %s: every label whole, inside, apart", (widgetId, medium) => {
    const widget = charts.find((w) => w.metadata.id === widgetId)!;
    const data = rows[widgetId];
    expect(data.rows.length, "the sample has data for it").toBeGreaterThan(0);
    const { w, h } = widget.spec.layout ?? { w: 6, h: 4 };
    const box = MEDIA[medium](w, h);
    const svg = drawChart({ base: widget.spec.display.echarts?.option, mappings: widget.spec.data?.mappings, data, formats: viewColumnFormats(view, widget) }, box);
    expect(labelsOf(svg).length, "it has labels").toBeGreaterThan(0);
    expect(labelProblems(svg, box)).toEqual([]);
    // Named categories and slices (not dates, which are labelled by their grain as many as fit) are all labelled: none is left
    // out to make the rest fit. A label wrapped on two lines is two texts, so this looks for every word.
    const words = new Set(labelsOf(svg).flatMap((l) => l.text.split(/\s+/)));
    const mappings = widget.spec.data?.mappings ?? {};
    // A scatter's point names are its labels too, but those that would collide give way (hidden; the tooltip names the point).
    const scatter = chartType(widget.spec.display.echarts?.option ?? {}, widget.spec.data?.mappings) === "scatter";
    for (const key of scatter ? ["x", "y"] : ["x", "y", "label"]) {
      const column = mappings[key];
      if (typeof column !== "string") continue;
      const names = [...new Set(data.rows.map((r) => r[column]))].filter((v): v is string => typeof v === "string" && !/^\d{4}-\d{2}/.test(v));
      for (const name of names) expect(name.split(/\s+/).filter((word) => !words.has(word)), `'${name}' (${key}) is labelled`).toEqual([]);
    }
  });
});
