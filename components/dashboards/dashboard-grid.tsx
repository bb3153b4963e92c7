"use client";

import { useMemo, type ReactNode } from "react";
import { Responsive, useContainerWidth } from "react-grid-layout";
import "react-grid-layout/css/styles.css";
import type { WidgetManifest } from "@/lib/manifest/schema";
import type { Breakpoint } from "@/lib/manifest/schema";
import { activeBreakpoints, GRID_COLUMNS, responsiveLayouts } from "@/lib/dashboards/wiring";
import styles from "./dashboards.module.css";

export const ROW_HEIGHT = 76;
const MARGIN = [14, 14] as const;

/** Pixel height of `rows` grid rows, margins included: how tall a widget of that layout height is. */
export const gridHeight = (rows: number) => rows * ROW_HEIGHT + (rows - 1) * MARGIN[1];

interface DashboardGridProps {
  widgets: WidgetManifest[];
  /** `spec.responsive.breakpoints` of the manifest. */
  breakpoints: readonly Breakpoint[] | undefined;
  /** One cell per widget, in the same order. */
  renderWidget: (widget: WidgetManifest) => ReactNode;
}

/**
 * The read-only grid: react-grid-layout's responsive layout with the manifest's breakpoints,
 * no dragging or resizing. It waits for the container's width before placing anything, so
 * widgets never jump from a guessed width to the real one.
 */
export function DashboardGrid({ widgets, breakpoints, renderWidget }: DashboardGridProps) {
  const { width, containerRef, mounted } = useContainerWidth({ measureBeforeMount: true });
  const layouts = useMemo(() => responsiveLayouts(widgets), [widgets]);
  const widths = useMemo(() => activeBreakpoints(breakpoints), [breakpoints]);
  const columns = useMemo(() => Object.fromEntries(Object.keys(widths).map((bp) => [bp, GRID_COLUMNS])), [widths]);
  if (widgets.length === 0) {
    return <p className={styles.emptyTab}>This tab has no widgets yet.</p>;
  }
  return (
    <div ref={containerRef} className={styles.grid} data-testid="dashboard-grid">
      {mounted && (
        <Responsive
          width={width}
          layouts={layouts}
          breakpoints={widths}
          cols={columns}
          rowHeight={ROW_HEIGHT}
          margin={MARGIN}
          containerPadding={[0, 0]}
          dragConfig={{ enabled: false }}
          resizeConfig={{ enabled: false }}
        >
          {widgets.map((w) => (
            <div key={w.metadata.id} className={styles.cell}>
              {renderWidget(w)}
            </div>
          ))}
        </Responsive>
      )}
    </div>
  );
}
