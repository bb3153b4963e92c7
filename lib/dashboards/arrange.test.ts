import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { applyLayoutMoves } from "@/lib/manifest/yaml-layout-edit";
import { arrangeTargets, keyboardArrange, manifestBoxes, movesFor, placed } from "./arrange";
import { gridAreas, type GridBox } from "./wiring";

const sample = fs.readFileSync(path.join(import.meta.dirname, "../../docs/manifests/sample-dashboard.yaml"), "utf8");
const box = (i: string, x: number, y: number, w: number, h: number): GridBox => ({ i, x, y, w, h });
const at = (layout: GridBox[] | null, id: string) => layout?.find((b) => b.i === id);

describe("arranging by hand", () => {
  it("offers the base layout and every listed breakpoint but the phone's", () => {
    expect(arrangeTargets(undefined)).toEqual(["base", "tablet", "desktop", "wide"]);
    expect(arrangeTargets(["mobile", "wide"])).toEqual(["base", "wide"]);
  });

  it("moves a tile one cell with the arrow keys, and past the tile below or above", () => {
    const layout = placed([box("a", 0, 0, 6, 2), box("b", 0, 2, 6, 3), box("c", 6, 0, 6, 2)]);
    expect(at(keyboardArrange(layout, "a", "ArrowRight", false), "a")).toMatchObject({ x: 1 });
    expect(keyboardArrange(layout, "a", "ArrowLeft", false)).toBeNull();
    const down = keyboardArrange(layout, "a", "ArrowDown", false);
    expect(at(down, "a")!.y).toBeGreaterThan(at(down, "b")!.y);
    const up = keyboardArrange(down!, "a", "ArrowUp", false);
    expect(at(up, "a")).toMatchObject({ y: 0 });
    expect(keyboardArrange(layout, "a", "ArrowUp", false)).toBeNull();
  });

  it("resizes with shift and the arrows, within the 12 columns", () => {
    const layout = placed([box("a", 0, 0, 6, 2), box("c", 6, 0, 6, 2)]);
    expect(at(keyboardArrange(layout, "a", "ArrowDown", true), "a")).toMatchObject({ w: 6, h: 3 });
    expect(at(keyboardArrange(layout, "a", "ArrowLeft", true), "a")).toMatchObject({ w: 5 });
    expect(keyboardArrange(layout, "c", "ArrowRight", true)).toBeNull();
    expect(keyboardArrange(placed([box("a", 0, 0, 1, 1)]), "a", "ArrowUp", true)).toBeNull();
  });

  it("writes only the tiles whose place changed, and the file lands where the grid showed (the sample)", () => {
    const parsed = parseDashboardYaml(sample);
    if (!parsed.ok) throw new Error("the sample must validate");
    const overview = parsed.dashboard.manifest.spec.tabs[0].widgets.map((id) => parsed.dashboard.widgetsById.get(id)!).filter((w) => w.spec.component !== "filter");
    const own = manifestBoxes(overview, "base");
    const shown = placed(own);
    // What e2e/layout.spec.ts does first: the revenue KPI one column right stays on its row, one row taller in place.
    const revenue = at(shown, "revenue_kpi")!;
    expect(at(keyboardArrange(shown, "revenue_kpi", "ArrowRight", false), "revenue_kpi")).toEqual({ ...revenue, x: revenue.x + 1 });
    const right = keyboardArrange(shown, "revenue_kpi", "ArrowRight", false)!;
    expect(at(keyboardArrange(right, "revenue_kpi", "ArrowDown", true), "revenue_kpi")).toEqual({ ...revenue, x: revenue.x + 1, h: revenue.h + 1 });
    // A KPI tile, the trend under the KPIs and the last tile: enough shapes, at a parse per case.
    for (const id of ["revenue_kpi", "revenue_trend", shown[shown.length - 1].i]) {
      for (const key of ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"] as const) {
        for (const resize of [false, true]) {
          const arranged = keyboardArrange(shown, id, key, resize);
          if (!arranged) continue;
          const moves = movesFor(own, arranged, "base");
          const changed = arranged.filter((b) => JSON.stringify(b) !== JSON.stringify(at(shown, b.i)));
          expect(moves.map((m) => m.widgetId).sort()).toEqual(expect.arrayContaining(changed.map((b) => b.i).sort()));
          const edited = applyLayoutMoves(sample, moves);
          if (!edited.ok) throw new Error(edited.message);
          const after = parseDashboardYaml(edited.text);
          if (!after.ok) throw new Error(JSON.stringify(after.errors));
          const widgets = overview.map((w) => after.dashboard.widgetsById.get(w.metadata.id)!);
          const areas = gridAreas(widgets, ["desktop"]);
          for (const b of arranged) expect(areas.get(b.i)!.desktop).toBe(`${b.y + 1} / ${b.x + 1} / span ${b.h} / span ${b.w}`);
        }
      }
    }
  });
});
