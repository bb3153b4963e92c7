"use client";

import { useState } from "react";
import type { WidgetManifest } from "@/lib/manifest/schema";
import type { ColumnFormats } from "@/lib/dashboards/column-formats";
import { columnDecimals, formatCell, formatFixed, formatValue, humanize, toNumber } from "@/lib/dashboards/format";
import { resolveFormat } from "@/lib/manifest/value-format";
import styles from "./widgets.module.css";

interface TableWidgetProps {
  widget: WidgetManifest;
  columns: string[];
  rows: Record<string, unknown>[];
  /** The declared formats of the widget's columns. */
  formats: ColumnFormats;
}

/** Numeric columns are right-aligned: every non-empty cell is a number. */
function numericColumns(columns: string[], rows: Record<string, unknown>[]): Set<string> {
  return new Set(columns.filter((c) => rows.some((r) => r[c] !== null && r[c] !== undefined) && rows.every((r) => r[c] === null || r[c] === undefined || typeof r[c] === "number" || toNumber(r[c]) !== null)));
}

/**
 * Plain rows, `display.table.page_size` at a time, with a pager of ordinary buttons. A numeric
 * column reads in its declared format, else with as many decimals as its values need.
 */
export function TableWidget({ widget, columns, rows, formats }: TableWidgetProps) {
  const pageSize = widget.spec.display.table?.page_size ?? 25;
  const pages = Math.max(1, Math.ceil(rows.length / pageSize));
  const [requested, setPage] = useState(0);
  // New data may have fewer pages than the page we were on.
  const page = Math.min(requested, pages - 1);
  const shown = rows.slice(page * pageSize, (page + 1) * pageSize);
  const numeric = numericColumns(columns, rows);
  const names = columns.length > 0 ? columns : Object.keys(rows[0] ?? {});
  const decimals = new Map([...numeric].map((c) => [c, columnDecimals(rows.map((r) => r[c]))]));
  const cell = (column: string, value: unknown) => {
    const n = numeric.has(column) ? toNumber(value) : null;
    if (n === null) return formatCell(value);
    const declared = formats[column];
    return declared === undefined ? formatFixed(n, decimals.get(column) ?? 0) : formatValue(n, resolveFormat(declared));
  };
  return (
    <div className={styles.tableWrap}>
      <div className={styles.tableScroll} tabIndex={0} aria-label={`${widget.metadata.name} table`}>
        <table className={styles.table}>
          <thead>
            <tr>
              {names.map((c) => (
                <th key={c} scope="col" className={numeric.has(c) ? styles.num : undefined}>
                  {humanize(c)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((row, i) => (
              <tr key={page * pageSize + i}>
                {names.map((c) => (
                  <td key={c} className={numeric.has(c) ? styles.num : undefined}>
                    {cell(c, row[c])}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {pages > 1 && (
        <nav className={styles.pager} aria-label={`${widget.metadata.name} pages`}>
          <button type="button" className={styles.pagerButton} onClick={() => setPage(0)} disabled={page === 0} aria-label="First page">
            «
          </button>
          <button type="button" className={styles.pagerButton} onClick={() => setPage(page - 1)} disabled={page === 0} aria-label="Previous page">
            ‹
          </button>
          <span aria-live="polite">
            {page * pageSize + 1}–{page * pageSize + shown.length} of {rows.length}
          </span>
          <button type="button" className={styles.pagerButton} onClick={() => setPage(page + 1)} disabled={page >= pages - 1} aria-label="Next page">
            ›
          </button>
          <button type="button" className={styles.pagerButton} onClick={() => setPage(pages - 1)} disabled={page >= pages - 1} aria-label="Last page">
            »
          </button>
        </nav>
      )}
    </div>
  );
}
