import { cloneLayout, correctBounds, moveElement, verticalCompactor, type LayoutItem } from "react-grid-layout/core";
import { GRID_COLUMNS } from "@/lib/manifest/grid";
import type { Breakpoint, WidgetManifest } from "@/lib/manifest/schema";
import type { LayoutBox, LayoutMove, LayoutTarget } from "@/lib/manifest/yaml-layout-edit";
import type { GridBox } from "./wiring";

/**
 * The boxes layout mode arranges (issue 44 §2): every breakpoint listed but `mobile`, whose boxes the viewer does not
 * read as they are (a phone stacks widgets in the base layout's reading order), after "base", the layout of every
 * width without its own box.
 */
export function arrangeTargets(listed: readonly Breakpoint[] | undefined): LayoutTarget[] {
  const breakpoints: Breakpoint[] = listed && listed.length > 0 ? [...new Set(listed)] : ["mobile", "tablet", "desktop", "wide"];
  return ["base", ...(["tablet", "desktop", "wide"] as const).filter((bp) => breakpoints.includes(bp))];
}

/** The manifest's own boxes at a target: a breakpoint's `responsive` box where the widget has one, its base box otherwise. */
export function manifestBoxes(widgets: readonly WidgetManifest[], at: LayoutTarget): GridBox[] {
  return widgets.map((w) => {
    const { x, y, w: width, h } = (at === "base" ? undefined : w.spec.layout.responsive?.[at]) ?? w.spec.layout;
    return { i: w.metadata.id, x, y, w: width, h };
  });
}

/** Boxes as the viewer places them: clamped to the 12 columns and compacted upwards (react-grid-layout's own rules). */
export function placed(boxes: readonly GridBox[]): GridBox[] {
  const items: LayoutItem[] = boxes.map((b) => ({ ...b }));
  return verticalCompactor.compact(correctBounds(items, { cols: GRID_COLUMNS }), GRID_COLUMNS).map(({ i, x, y, w, h }) => ({ i, x, y, w, h }));
}

const sameBox = (a: LayoutBox, b: LayoutBox) => a.x === b.x && a.y === b.y && a.w === b.w && a.h === b.h;
const boxOf = ({ x, y, w, h }: GridBox): LayoutBox => ({ x, y, w, h });

/**
 * The manifest writes that make the grid show `arranged`: the widgets whose placed box changed, with their new box.
 * When the untouched widgets' own boxes (uncompacted in the file) would then compact differently, every widget whose
 * own box differs from what is shown is written too, so the file always lands where the grid showed.
 */
export function movesFor(own: readonly GridBox[], arranged: readonly GridBox[], at: LayoutTarget): LayoutMove[] {
  const shown = new Map(placed(own).map((b) => [b.i, b]));
  const next = new Map(arranged.map((b) => [b.i, b]));
  const changed = own.filter((b) => next.has(b.i) && !sameBox(shown.get(b.i)!, next.get(b.i)!));
  if (changed.length === 0) return [];
  const written = new Map(own.map((b) => [b.i, b]));
  for (const b of changed) written.set(b.i, next.get(b.i)!);
  const lands = placed([...written.values()]).every((b) => sameBox(b, next.get(b.i) ?? b));
  const writes = lands ? changed : own.filter((b) => next.has(b.i) && !sameBox(b, next.get(b.i)!));
  return writes.map((b) => ({ widgetId: b.i, at, box: boxOf(next.get(b.i)!) }));
}

export type ArrangeKey = "ArrowLeft" | "ArrowRight" | "ArrowUp" | "ArrowDown";

/**
 * The placed layout after one key on a focused tile: arrows move it one cell (down and up step past the tile in the
 * way, as a drag would), shift+arrows resize it by one column or row. Null when the tile cannot go that way.
 */
export function keyboardArrange(layout: readonly GridBox[], id: string, key: ArrangeKey, resize: boolean): GridBox[] | null {
  const current = layout.find((b) => b.i === id);
  if (!current) return null;
  if (resize) {
    const w = current.w + (key === "ArrowRight" ? 1 : key === "ArrowLeft" ? -1 : 0);
    const h = current.h + (key === "ArrowDown" ? 1 : key === "ArrowUp" ? -1 : 0);
    if (w < 1 || h < 1 || current.x + w > GRID_COLUMNS) return null;
    return placed(layout.map((b) => (b.i === id ? { ...b, w, h } : b)));
  }
  if (key === "ArrowLeft" || key === "ArrowRight") {
    const x = current.x + (key === "ArrowRight" ? 1 : -1);
    if (x < 0 || x + current.w > GRID_COLUMNS) return null;
    return moved(layout, id, x, current.y);
  }
  // Vertical steps: the nearest row at which the tile really lands higher (or lower) once the grid compacts.
  const direction = key === "ArrowDown" ? 1 : -1;
  const limit = Math.max(...layout.map((b) => b.y + b.h)) + 1;
  for (let y = current.y + direction; y >= 0 && y <= limit; y += direction) {
    const next = moved(layout, id, current.x, y);
    const landed = next.find((b) => b.i === id)!;
    if (direction > 0 ? landed.y > current.y : landed.y < current.y) return next;
  }
  return null;
}

function moved(layout: readonly GridBox[], id: string, x: number, y: number): GridBox[] {
  const items = cloneLayout(layout.map((b) => ({ ...b })));
  const item = items.find((b) => b.i === id)!;
  const after = moveElement(items, item, x, y, true, false, "vertical", GRID_COLUMNS);
  return placed(after.map(({ i, x: bx, y: by, w, h }) => ({ i, x: bx, y: by, w, h })));
}
