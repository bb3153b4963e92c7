"use client";

import { useState } from "react";
import type { WidgetManifest } from "@/lib/manifest/schema";
import type { ColumnFormats } from "@/lib/dashboards/column-formats";
import { humanize } from "@/lib/dashboards/format";
import { tableCells } from "@/lib/dashboards/widget-figures";
import styles from "./widgets.module.css";

interface TableWidgetProps {
  widget: WidgetManifest;
  columns: string[];
  rows: Record<string, unknown>[];
  /** The declared formats of the widget's columns. */
  formats: ColumnFormats;
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
  const { names, numeric, cell } = tableCells(columns, rows, formats);
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
