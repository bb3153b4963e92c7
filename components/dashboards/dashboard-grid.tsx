import { useMemo, type CSSProperties, type ReactNode } from "react";
import type { Breakpoint, WidgetManifest } from "@/lib/manifest/schema";
import { gridAreas } from "@/lib/dashboards/wiring";
import styles from "./dashboards.module.css";

export const ROW_HEIGHT = 76;
export const GAP = 14;

/** Pixel height of `rows` grid rows, gaps included: how tall a widget of that layout height is. */
export const gridHeight = (rows: number) => rows * ROW_HEIGHT + (rows - 1) * GAP;

interface DashboardGridProps {
  widgets: WidgetManifest[];
  /** `spec.responsive.breakpoints` of the manifest. */
  breakpoints: readonly Breakpoint[] | undefined;
  /** One cell per widget, in the same order. */
  renderWidget: (widget: WidgetManifest) => ReactNode;
}

/**
 * The read-only grid: a CSS grid of 12 columns whose areas are computed from the manifest (`gridAreas`), one per
 * width range, and chosen by container queries on the grid's own width. Nothing is measured in the browser, so
 * the server's HTML is already laid out and widgets paint before any script runs.
 */
export function DashboardGrid({ widgets, breakpoints, renderWidget }: DashboardGridProps) {
  const areas = useMemo(() => gridAreas(widgets, breakpoints), [widgets, breakpoints]);
  if (widgets.length === 0) {
    return <p className={styles.emptyTab}>This tab has no widgets yet.</p>;
  }
  return (
    <div className={styles.grid} data-testid="dashboard-grid">
      <div className={styles.gridCells} style={{ gridAutoRows: ROW_HEIGHT, gap: GAP }}>
        {widgets.map((w) => {
          const area = areas.get(w.metadata.id)!;
          const style = { "--area-mobile": area.mobile, "--area-tablet": area.tablet, "--area-desktop": area.desktop, "--area-wide": area.wide } as CSSProperties;
          return (
            <div key={w.metadata.id} className={styles.cell} style={style} data-grid-cell>
              {renderWidget(w)}
            </div>
          );
        })}
      </div>
    </div>
  );
}
