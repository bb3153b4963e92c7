import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseAllDocuments, type Document } from "yaml";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { type LayoutBox, type LayoutTarget, applyLayoutMoves } from "./yaml-layout-edit";

const sample = fs.readFileSync(path.join(import.meta.dirname, "../../docs/manifests/sample-dashboard.yaml"), "utf8");

const docsOf = (text: string) => parseAllDocuments(text) as Document.Parsed[];
const toJS = (text: string) => docsOf(text).map((d) => d.toJS() as Record<string, unknown>);

/** Where a widget's manifest sits in the documents' plain values: its own document, or an entry of spec.widgets. */
function widgetOf(documents: Record<string, unknown>[], id: string): Record<string, unknown> {
  for (const doc of documents) {
    if (doc.kind === "widget" && (doc.metadata as { id: string }).id === id) return doc;
    const inline = ((doc.spec as { widgets?: Record<string, unknown>[] } | undefined)?.widgets ?? []).find((w) => (w.metadata as { id: string }).id === id);
    if (inline) return inline;
  }
  throw new Error(`no widget ${id}`);
}

/** The documents' values as the move should leave them: the target box of one widget set, nothing else. */
function expectedAfter(before: Record<string, unknown>[], id: string, at: LayoutTarget, box: LayoutBox) {
  // Through JSON: an alias's value is the anchor's very object in toJS, and only this widget's copy may change.
  const after = JSON.parse(JSON.stringify(before)) as Record<string, unknown>[];
  const layout = (widgetOf(after, id).spec as { layout: Record<string, unknown> }).layout;
  if (at === "base") Object.assign(layout, box);
  else layout.responsive = { ...(layout.responsive as object | undefined), [at]: box };
  return after;
}

/** The one stretch where two texts differ, as offsets into the first. */
function changedSpan(before: string, after: string): [number, number] {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start += 1;
  let end = 0;
  while (end < before.length - start && end < after.length - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end += 1;
  return [start, before.length - end];
}

/** The source range of a widget's `spec.layout` value, the only place a move may touch. */
function layoutRange(text: string, id: string): [number, number] {
  for (const doc of docsOf(text)) {
    const own = doc.get("kind") === "widget" && doc.getIn(["metadata", "id"]) === id ? doc.getIn(["spec", "layout"], true) : undefined;
    const items = (doc.getIn(["spec", "widgets"], true) as { items?: unknown[] } | undefined)?.items ?? [];
    const inline = items.find((item) => (item as { getIn(p: string[]): unknown }).getIn(["metadata", "id"]) === id) as { getIn(p: string[], keep: boolean): unknown } | undefined;
    const node = (own ?? inline?.getIn(["spec", "layout"], true)) as { range: [number, number, number] } | undefined;
    if (node) return [node.range[0], node.range[2]];
  }
  throw new Error(`no layout for ${id}`);
}

// ------------------------------------------------------------------ generated manifests

const layoutStyles = ["flow", "flowComment", "block", "blockComments", "anchored", "aliasedH", "aliasedLayout", "withResponsive"] as const;
type LayoutStyle = (typeof layoutStyles)[number];

function layoutText(style: LayoutStyle, box: LayoutBox, indent: string, n: number): string {
  const { x, y, w, h } = box;
  switch (style) {
    case "flow":
      return ` { x: ${x}, y: ${y}, w: ${w}, h: ${h} }`;
    case "flowComment":
      return ` {x: ${x},   y: ${y}, w: ${w}, h: ${h}}   # placed by hand`;
    case "block":
      return `\n${indent}  x: ${x}\n${indent}  y: ${y}\n${indent}  w: ${w}\n${indent}  h: ${h}`;
    case "blockComments":
      return `  # the box\n${indent}  h: ${h} # rows\n${indent}  # columns next\n${indent}  w: ${w}\n${indent}  y: ${y}\n${indent}  x: ${x}   # left edge\n`;
    case "anchored":
      return ` &own${n} { x: &x${n} ${x}, y: ${y}, w: ${w}, h: ${h} }`;
    case "aliasedH":
      return ` { x: ${x}, y: ${y}, w: ${w}, h: *tall }`;
    case "aliasedLayout":
      return " *box";
    case "withResponsive":
      return `\n${indent}  x: ${x}\n${indent}  y: ${y}\n${indent}  w: ${w}\n${indent}  h: ${h}\n${indent}  responsive:\n${indent}    wide: { x: 0, y: 0, w: 12, h: 2 }  # full width on wide screens`;
  }
}

interface GeneratedWidget {
  style: LayoutStyle;
  box: LayoutBox;
  inline: boolean;
}

const boxArb = fc.record({ x: fc.integer({ min: 0, max: 11 }), y: fc.integer({ min: 0, max: 40 }), w: fc.integer({ min: 1, max: 12 }), h: fc.integer({ min: 1, max: 8 }) });
const widgetArb = fc.record({ style: fc.constantFrom(...layoutStyles), box: boxArb, inline: fc.boolean() });

/** Anchors `tall` and `box` live in every document that may alias them (YAML anchors do not cross `---`). */
const ANCHORS = "anchors: { tall: &tall 3, box: &box { x: 0, y: 0, w: 4, h: 2 } }  # shared sizes";

function manifestText(widgets: GeneratedWidget[]): string {
  const inline = widgets.map((w, i) => ({ ...w, i })).filter((w) => w.inline);
  const separate = widgets.map((w, i) => ({ ...w, i })).filter((w) => !w.inline);
  const lines = ["# A generated dashboard", 'version: "1.0"', "kind: dashboard", "metadata: { id: gen, name: 'Generated' }", ANCHORS, "spec:"];
  if (inline.length > 0) {
    lines.push("  widgets:");
    for (const w of inline) {
      lines.push(`    - kind: widget # inline ${w.i}`, `      metadata: { id: w${w.i}, name: "W ${w.i}" }`, "      spec:", "        component: text", `        layout:${layoutText(w.style, w.box, "        ", w.i)}`);
    }
  } else {
    lines.push("  tabs: []");
  }
  const docs = [lines.join("\n")];
  for (const w of separate) {
    docs.push(["# widget " + w.i, "kind: widget", ANCHORS, `metadata:\n  id: w${w.i}\n  name: W ${w.i}`, "spec:", "  component: text", `  layout:${layoutText(w.style, w.box, "  ", w.i)}`, "  display: {}  # trailing"].join("\n"));
  }
  return docs.join("\n---\n") + "\n";
}

const targetArb = fc.constantFrom<LayoutTarget>("base", "tablet", "desktop", "wide", "mobile");

describe("applyLayoutMoves", () => {
  it("changes only the moved widget's layout keys, and only bytes inside its layout (generated manifests)", () => {
    fc.assert(
      fc.property(fc.array(widgetArb, { minLength: 1, maxLength: 5 }), fc.nat(), targetArb, boxArb, (widgets, pick, at, box) => {
        const text = manifestText(widgets);
        const id = `w${pick % widgets.length}`;
        const before = toJS(text);
        const result = applyLayoutMoves(text, [{ widgetId: id, at, box }]);
        if (!result.ok) throw new Error(result.message);
        expect(docsOf(result.text).flatMap((d) => d.errors)).toEqual([]);
        expect(toJS(result.text)).toEqual(expectedAfter(before, id, at, box));
        const [from, to] = changedSpan(text, result.text);
        const [start, end] = layoutRange(text, id);
        if (from < to) {
          expect(from).toBeGreaterThanOrEqual(start);
          expect(to).toBeLessThanOrEqual(end);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("gives back the text byte for byte when a base box is moved back where it was", () => {
    fc.assert(
      fc.property(fc.array(widgetArb.filter((w) => !w.style.startsWith("aliased")), { minLength: 1, maxLength: 4 }), fc.nat(), boxArb, (widgets, pick, box) => {
        const text = manifestText(widgets);
        const index = pick % widgets.length;
        const moved = applyLayoutMoves(text, [{ widgetId: `w${index}`, at: "base", box }]);
        if (!moved.ok) throw new Error(moved.message);
        const back = applyLayoutMoves(moved.text, [{ widgetId: `w${index}`, at: "base", box: widgets[index].box }]);
        expect(back).toEqual({ ok: true, text });
      }),
      { numRuns: 100 },
    );
  });

  it("keeps the sample manifest valid and moves exactly the widget asked, at any breakpoint", () => {
    const parsed = parseDashboardYaml(sample);
    if (!parsed.ok) throw new Error("the sample must validate");
    const ids = parsed.dashboard.widgets.map((w) => w.metadata.id);
    fc.assert(
      fc.property(fc.constantFrom(...ids), targetArb, boxArb, (id, at, box) => {
        const result = applyLayoutMoves(sample, [{ widgetId: id, at, box }]);
        if (!result.ok) throw new Error(result.message);
        const after = parseDashboardYaml(result.text);
        if (!after.ok) throw new Error(JSON.stringify(after.errors));
        for (const widget of after.dashboard.widgets) {
          const old = parsed.dashboard.widgetsById.get(widget.metadata.id)!;
          if (widget.metadata.id !== id) expect(widget).toEqual(old);
          else if (at === "base") expect(widget.spec.layout).toEqual({ ...old.spec.layout, ...box });
          else expect(widget.spec.layout).toEqual({ ...old.spec.layout, responsive: { ...old.spec.layout.responsive, [at]: box } });
        }
      }),
      { numRuns: 40 },
    );
  });

  it("writes a new breakpoint box in the map's own style", () => {
    const flow = "kind: widget\nmetadata: { id: a }\nspec:\n  layout: { x: 0, y: 1, w: 3, h: 2 } # kpi\n";
    expect(applyLayoutMoves(flow, [{ widgetId: "a", at: "wide", box: { x: 6, y: 0, w: 3, h: 2 } }])).toEqual({
      ok: true,
      text: "kind: widget\nmetadata: { id: a }\nspec:\n  layout: { x: 0, y: 1, w: 3, h: 2, responsive: { wide: { x: 6, y: 0, w: 3, h: 2 } } } # kpi\n",
    });
    const block = "kind: widget\nmetadata: { id: a }\nspec:\n  layout:\n    x: 0\n    y: 1\n    w: 3\n    h: 2 # rows\n  display: {}\n";
    expect(applyLayoutMoves(block, [{ widgetId: "a", at: "tablet", box: { x: 0, y: 0, w: 6, h: 2 } }])).toEqual({
      ok: true,
      text: "kind: widget\nmetadata: { id: a }\nspec:\n  layout:\n    x: 0\n    y: 1\n    w: 3\n    h: 2 # rows\n    responsive: { tablet: { x: 0, y: 0, w: 6, h: 2 } }\n  display: {}\n",
    });
  });

  it("keeps CRLF line ends when it adds a line", () => {
    const text = "kind: widget\r\nmetadata: { id: a }\r\nspec:\r\n  layout:\r\n    x: 0\r\n    y: 1\r\n    w: 3\r\n    h: 2\r\n";
    const result = applyLayoutMoves(text, [{ widgetId: "a", at: "wide", box: { x: 0, y: 0, w: 6, h: 2 } }]);
    expect(result).toEqual({ ok: true, text: text.replace("h: 2\r\n", "h: 2\r\n    responsive: { wide: { x: 0, y: 0, w: 6, h: 2 } }\r\n") });
  });

  it("refuses to move a box other widgets share through an anchor, and says why", () => {
    const text = [
      "kind: dashboard",
      "spec:",
      "  widgets:",
      "    - { metadata: { id: a }, spec: { layout: &half { x: 0, y: 0, w: 6, h: 2 } } }",
      "    - { metadata: { id: b }, spec: { layout: *half } }",
    ].join("\n");
    const refused = applyLayoutMoves(text, [{ widgetId: "a", at: "base", box: { x: 6, y: 0, w: 6, h: 2 } }]);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.message).toMatch(/anchor &half/);
    // The alias side is detached instead: b gets its own box, a keeps the anchor.
    const detached = applyLayoutMoves(text, [{ widgetId: "b", at: "base", box: { x: 6, y: 0, w: 6, h: 2 } }]);
    expect(detached).toEqual({ ok: true, text: text.replace("layout: *half", "layout: { x: 6, y: 0, w: 6, h: 2 }") });
  });

  it("answers unknown widgets, bad boxes and broken YAML with a message, never a throw", () => {
    const text = "kind: widget\nmetadata: { id: a }\nspec:\n  layout: { x: 0, y: 1, w: 3, h: 2 }\n";
    expect(applyLayoutMoves(text, [{ widgetId: "zz", at: "base", box: { x: 0, y: 0, w: 1, h: 1 } }])).toEqual({ ok: false, message: "no widget with id zz in the manifest" });
    expect(applyLayoutMoves(text, [{ widgetId: "a", at: "base", box: { x: 0, y: 0, w: 0, h: 1 } }]).ok).toBe(false);
    expect(applyLayoutMoves("a: [", [{ widgetId: "a", at: "base", box: { x: 0, y: 0, w: 1, h: 1 } }]).ok).toBe(false);
  });
});
