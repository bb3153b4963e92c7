"use client";

import "react-grid-layout/css/styles.css";
import { useEffect, useId, useMemo, useState, type KeyboardEvent } from "react";
import { GridLayout, useContainerWidth, type Layout, type LayoutItem } from "react-grid-layout";
import { type ArrangeKey, arrangeTargets, keyboardArrange, manifestBoxes, movesFor, placed } from "@/lib/dashboards/arrange";
import { pageRegions, type GridBox, type ViewManifest } from "@/lib/dashboards/wiring";
import { applyLayoutMoves, type LayoutTarget } from "@/lib/manifest/yaml-layout-edit";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { GRID_COLUMNS } from "@/lib/manifest/grid";
import { GAP, ROW_HEIGHT } from "./dashboard-grid";
import { pageNonce } from "@/components/page-nonce";
import { useManifestEdits } from "./manifest-edits";
import styles from "./dashboards.module.css";

const TARGET_NAMES: Record<LayoutTarget, string> = { base: "All widths", mobile: "Phone", tablet: "Tablet", desktop: "Desktop", wide: "Wide" };
const ARROWS = new Set<string>(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"]);

const boxesOf = (layout: Layout): GridBox[] => layout.map(({ i, x, y, w, h }) => ({ i, x, y, w, h }));

function where(box: GridBox): string {
  return `column ${box.x + 1}, row ${box.y + 1}, ${box.w} ${box.w === 1 ? "column" : "columns"} wide, ${box.h} ${box.h === 1 ? "row" : "rows"} high`;
}

/**
 * react-draggable (inside react-grid-layout) adds a <style> of this id on the first drag, without the page's CSP nonce,
 * so the browser blocks it; it reuses one that exists, so one is made here with the nonce.
 */
const DRAGGABLE_STYLE_ID = "react-draggable-style-el";

function useDraggableStyle() {
  useEffect(() => {
    if (document.getElementById(DRAGGABLE_STYLE_ID)) return;
    const style = document.createElement("style");
    style.id = DRAGGABLE_STYLE_ID;
    style.nonce = pageNonce();
    style.textContent = ".react-draggable-transparent-selection *::selection {all: inherit;}";
    document.head.appendChild(style);
  }, []);
}

/**
 * Layout mode (issue 44 §2): the grid of the tab on screen as labelled tiles on react-grid-layout, dragged, resized
 * or moved with the keyboard; every change is written into the YAML on the left at once (only the moved boxes'
 * numbers change) and is one step of the editor's undo history.
 */
export function LayoutMode({ view }: { view: ViewManifest }) {
  useDraggableStyle();
  const edits = useManifestEdits();
  const targets = arrangeTargets(view.manifest.spec.responsive?.breakpoints);
  const [target, setTarget] = useState<LayoutTarget>("base");
  const [tab, setTab] = useState<string | null>(null);
  const regions = pageRegions(view, tab);
  const byId = useMemo(() => new Map(view.widgets.map((w) => [w.metadata.id, w])), [view]);
  const widgets = regions.grid.map((id) => byId.get(id)).filter((w): w is WidgetManifest => w !== undefined);
  // The boxes a move just wrote, for the text it wrote: the editor's check of that text (deferred) may not have caught up.
  const [written, setWritten] = useState<{ text: string; target: LayoutTarget; tab: string; boxes: GridBox[] } | null>(null);
  const own = written && written.text === edits.text && written.target === target && written.tab === regions.tab ? written.boxes : manifestBoxes(widgets, target);
  const shown = placed(own);
  const [announcement, setAnnouncement] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  // Remounts the grid after a refused move, so the tile goes back to where the file has it.
  const [resets, setResets] = useState(0);
  const { width, containerRef, mounted } = useContainerWidth();
  const helpId = useId();

  function commit(arranged: GridBox[], movedId: string, resized: boolean) {
    const moves = movesFor(own, arranged, target);
    if (moves.length === 0) return;
    const result = applyLayoutMoves(edits.text, moves);
    if (!result.ok) {
      setProblem(`Not moved: ${result.message}`);
      setResets((n) => n + 1);
      return;
    }
    const box = arranged.find((b) => b.i === movedId)!;
    const name = byId.get(movedId)?.metadata.name ?? movedId;
    const label = `${resized ? "Resized" : "Moved"} ${name}: ${where(box)}`;
    const next = new Map(own.map((b) => [b.i, b]));
    for (const m of moves) next.set(m.widgetId, { i: m.widgetId, ...m.box });
    setWritten({ text: result.text, target, tab: regions.tab, boxes: [...next.values()] });
    setProblem(null);
    // The editor announces the applied edit (its label); this region only says why a key did nothing.
    setAnnouncement("");
    edits.apply(result.text, label);
  }

  function onTileKey(event: KeyboardEvent<HTMLDivElement>, id: string) {
    if (!ARROWS.has(event.key) || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    const arranged = keyboardArrange(shown, id, event.key as ArrangeKey, event.shiftKey);
    const name = byId.get(id)?.metadata.name ?? id;
    if (!arranged) {
      setAnnouncement(`${name} cannot ${event.shiftKey ? "be resized" : "move"} further that way`);
      return;
    }
    commit(arranged, id, event.shiftKey);
  }

  function onUndoKeys(event: KeyboardEvent<HTMLElement>) {
    if (!(event.ctrlKey || event.metaKey)) return;
    const key = event.key.toLowerCase();
    if (key === "z" && !event.shiftKey) edits.undo();
    else if ((key === "z" && event.shiftKey) || key === "y") edits.redo();
    else return;
    event.preventDefault();
  }

  return (
    <section className={styles.layoutMode} aria-label="Arrange widgets" onKeyDown={onUndoKeys} data-testid="layout-mode">
      <div className={styles.layoutToolbar}>
        <label>
          Layout for{" "}
          <select value={target} onChange={(e) => setTarget(e.target.value as LayoutTarget)} data-testid="layout-target">
            {targets.map((t) => (
              <option key={t} value={t}>
                {TARGET_NAMES[t]}
              </option>
            ))}
          </select>
        </label>
        {regions.tabs.length > 1 && (
          <label>
            Tab{" "}
            <select value={regions.tab} onChange={(e) => setTab(e.target.value)}>
              {regions.tabs.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <p id={helpId} className={styles.layoutHelp}>
          Drag a tile or its corner. With a tile focused, arrow keys move it and Shift+arrow keys resize it; Ctrl+Z undoes.
          {target === "base" ? " Widths without a layout of their own follow this one." : ` Moves write ${TARGET_NAMES[target].toLowerCase()} boxes (layout.responsive.${target}).`}
        </p>
      </div>
      {problem && (
        <p className={styles.error} role="alert">
          {problem}
        </p>
      )}
      <p className="visually-hidden" role="status" aria-live="polite" data-testid="layout-announcement">
        {announcement}
      </p>
      <div ref={containerRef} className={styles.layoutCanvas}>
        {widgets.length === 0 ? (
          <p className={styles.emptyTab}>This tab has no widgets on its grid.</p>
        ) : (
          mounted && (
            <GridLayout
              key={`${target}:${regions.tab}:${resets}`}
              width={width}
              layout={shown}
              gridConfig={{ cols: GRID_COLUMNS, rowHeight: ROW_HEIGHT, margin: [GAP, GAP], containerPadding: [0, 0] }}
              onDragStop={(layout: Layout, _old: LayoutItem | null, item: LayoutItem | null) => item && commit(boxesOf(layout), item.i, false)}
              onResizeStop={(layout: Layout, _old: LayoutItem | null, item: LayoutItem | null) => item && commit(boxesOf(layout), item.i, true)}
            >
              {shown.map((box) => {
                const widget = byId.get(box.i)!;
                return (
                  <div
                    key={box.i}
                    className={styles.layoutTile}
                    tabIndex={0}
                    role="group"
                    aria-roledescription="movable tile"
                    aria-label={`${widget.metadata.name}, ${where(box)}`}
                    aria-describedby={helpId}
                    data-testid={`layout-tile-${box.i}`}
                    data-box={`${box.x},${box.y},${box.w},${box.h}`}
                    onKeyDown={(event) => onTileKey(event, box.i)}
                  >
                    <strong>{widget.metadata.name}</strong>
                    <span className={styles.layoutTileKind}>
                      {widget.spec.component} · {box.w}×{box.h}
                    </span>
                  </div>
                );
              })}
            </GridLayout>
          )
        )}
      </div>
    </section>
  );
}
