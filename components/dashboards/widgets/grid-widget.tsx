"use client";

import "tabulator-tables/dist/css/tabulator.min.css";
import { useEffect, useMemo, useRef, useState } from "react";
import type { ColumnDefinition, ExportRow, Options, Tabulator } from "tabulator-tables";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { toCsv, toXlsx } from "@/lib/export-cells";
import type { ColumnFormats } from "@/lib/dashboards/column-formats";
import { humanize, spreadsheetFormat } from "@/lib/dashboards/format";
import { tableCells } from "@/lib/dashboards/widget-figures";
import { groupAwarePageModule } from "./grid-pages";
import { watchGridAria } from "./grid-aria";
import styles from "./widgets.module.css";

interface GridWidgetProps {
  widget: WidgetManifest;
  columns: string[];
  rows: Record<string, unknown>[];
  /** The declared formats of the widget's columns. */
  formats: ColumnFormats;
}

type ExportFormat = "csv" | "xlsx";

/** What the grid reads of Tabulator's Page module, which its type declarations leave out. */
interface TabulatorInternals {
  modules?: { page?: { pageCounterElement?: HTMLElement | null } };
}

/** Columns as Tabulator defines them; numeric cells read as in every table (lib/dashboards/widget-figures.ts tableCells). */
export function columnDefinitions(columns: string[], rows: Record<string, unknown>[], frozen: string[], formats: ColumnFormats): ColumnDefinition[] {
  const cells = tableCells(columns, rows, formats);
  return columns.map((column) => {
    const numeric = cells.numeric.has(column);
    return {
      title: humanize(column),
      field: column,
      frozen: frozen.includes(column),
      headerSort: true,
      sorter: numeric ? "number" : "string",
      hozAlign: numeric ? "right" : "left",
      headerHozAlign: numeric ? "right" : "left",
      formatter: numeric ? (cell) => cells.cell(column, cell.getValue()) : undefined,
    };
  });
}

/** Tabulator sorts on header clicks only; tab stops let keyboard users reach them (Enter/Space click, see onKeyDown below). */
function makeHeadersFocusable(root: HTMLElement | null) {
  root?.querySelectorAll<HTMLElement>(".tabulator-col.tabulator-sortable").forEach((header) => {
    header.tabIndex = 0;
  });
}

/** The file name of an export: the widget id and today's date, e.g. order_grid-2026-11-23.csv. */
function exportName(widget: WidgetManifest, format: ExportFormat): string {
  return `${widget.metadata.id}-${new Date().toISOString().slice(0, 10)}.${format}`;
}

/** Header and data rows of a Tabulator export as plain cell values (group and calc rows are off in downloadConfig). */
function exportCells(list: ExportRow[]): unknown[][] {
  return list
    .filter((row) => row.type === "header" || row.type === "row")
    .map((row) => row.columns.filter((column) => column !== null).map((column) => column.value as unknown));
}

let tabulatorLoaded: Promise<typeof import("tabulator-tables").TabulatorFull> | null = null;

/** Tabulator, loaded once in the browser, with pages that count data rows only when grouped (grid-pages.ts). */
function loadTabulator() {
  tabulatorLoaded ??= import("tabulator-tables").then(
    ({ TabulatorFull, PageModule }) => {
      TabulatorFull.registerModule(groupAwarePageModule(PageModule));
      return TabulatorFull;
    },
    (error: unknown) => {
      // A failed load (a dropped chunk) is tried again by the next grid.
      tabulatorLoaded = null;
      throw error;
    },
  );
  return tabulatorLoaded;
}

/**
 * A Tabulator grid with the manifest's pagination, frozen columns, grouping, initial sort and
 * export buttons. Tabulator (and exceljs, when Excel is exported) load in the browser only.
 * New rows replace the data of the existing grid, so the user's sort and page survive a re-query.
 */
export function GridWidget({ widget, columns, rows, formats }: GridWidgetProps) {
  const options = widget.spec.display.tabulator;
  const exports = options?.export ?? [];
  const host = useRef<HTMLDivElement>(null);
  // The pager and its row counter live outside the grid element: a grid may own rows only (grid-aria.ts).
  const pager = useRef<HTMLDivElement>(null);
  const pageCounter = useRef<HTMLSpanElement>(null);
  const table = useRef<Tabulator | null>(null);
  const latestRows = useRef(rows);
  // The rows the grid holds, so a build is not followed by a needless replaceData of the same rows.
  const rowsInGrid = useRef<Record<string, unknown>[] | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  // The grid is rebuilt only when its shape changes, not when rows do.
  const shape = useMemo(() => JSON.stringify([columns, options, formats]), [columns, options, formats]);
  const [builtShape, setBuiltShape] = useState<string | null>(null);
  const ready = builtShape === shape;

  useEffect(() => {
    latestRows.current = rows;
    if (table.current && ready && rowsInGrid.current !== rows) {
      rowsInGrid.current = rows;
      void table.current.replaceData(rows);
    }
  }, [rows, ready]);

  useEffect(() => {
    let cancelled = false;
    let built: Tabulator | null = null;
    let stopAria: (() => void) | null = null;
    const pagerElement = pager.current;
    const counterElement = pageCounter.current;
    (async () => {
      const TabulatorFull = await loadTabulator();
      if (cancelled || !host.current) return;
      const [shapeColumns, shapeOptions, shapeFormats] = JSON.parse(shape) as [string[], typeof options, ColumnFormats];
      const data = latestRows.current;
      rowsInGrid.current = data;
      const names = shapeColumns.length > 0 ? shapeColumns : Object.keys(data[0] ?? {});
      const config: Options = {
        data,
        columns: columnDefinitions(names, data, shapeOptions?.frozen_columns ?? [], shapeFormats),
        layout: "fitDataStretch",
        height: "100%",
        placeholder: "No data for the current filters",
        pagination: shapeOptions?.pagination ?? true,
        // Data rows per page, group headers not counted (grid-pages.ts).
        paginationSize: shapeOptions?.page_size ?? 25,
        paginationCounter: "rows",
        ...(pagerElement ? { paginationElement: pagerElement } : {}),
        groupBy: shapeOptions?.group_by,
        initialSort: shapeOptions?.initial_sort?.map((s) => ({ column: s.column, dir: s.dir })),
        // Exports are flat tables: group header rows would break a spreadsheet's columns.
        downloadConfig: { rowGroups: false, columnGroups: false, columnCalcs: false },
      };
      built = new TabulatorFull(host.current, config);
      built.on("tableBuilt", () => {
        if (cancelled || !host.current) return;
        stopAria = watchGridAria(host.current);
        // With paginationElement set, Tabulator keeps its row counter to itself (it still updates it): it goes beside the pager.
        const counter = (built as unknown as TabulatorInternals).modules?.page?.pageCounterElement;
        if (counter && counterElement && counter.parentElement !== counterElement) counterElement.appendChild(counter);
        makeHeadersFocusable(host.current);
        table.current = built;
        setBuiltShape(shape);
      });
    })().catch((error: unknown) => {
      if (!cancelled) setFailure(error instanceof Error ? error.message : String(error));
    });
    return () => {
      cancelled = true;
      table.current = null;
      stopAria?.();
      built?.destroy();
      // Tabulator leaves its buttons in an outside pager; the next build adds its own.
      pagerElement?.replaceChildren();
      counterElement?.replaceChildren();
    };
  }, [shape]);

  const download = (format: ExportFormat) => {
    const grid = table.current;
    if (!grid) return;
    // Custom downloaders over Tabulator's export rows (current sort and filter): every cell, headers
    // included, goes through the formula neutraliser (lib/export-cells.ts), and Excel files come from exceljs.
    grid.download((list, _options, setFileContents) => {
      const cells = exportCells(list);
      if (format === "csv") {
        setFileContents(toCsv(cells), "text/csv;charset=utf-8");
        return;
      }
      // The workbook keeps numbers as numbers, shown in their columns' declared formats (an id as stored).
      const fields = list.find((row) => row.type === "header")?.columns.filter((column) => column !== null).map((column) => column.component.getField()) ?? [];
      void toXlsx(cells, widget.metadata.name, fields.map((field) => spreadsheetFormat(formats[field]))).then(
        (buffer) => setFileContents(buffer, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        (error: unknown) => setFailure(`Excel export failed: ${error instanceof Error ? error.message : String(error)}`),
      );
    }, exportName(widget, format));
  };

  if (failure) {
    return (
      <div className={styles.errorState} role="alert">
        <strong>The grid could not start.</strong>
        <span>{failure}</span>
      </div>
    );
  }
  return (
    <div className={styles.grid}>
      {exports.length > 0 && (
        <div className={styles.gridTools}>
          {exports.map((format) => (
            <button key={format} type="button" className={styles.toolButton} onClick={() => download(format)} disabled={!ready} data-export={format}>
              <span aria-hidden="true">⤓</span> {format === "csv" ? "CSV" : "Excel"}
            </button>
          ))}
        </div>
      )}
      <div
        ref={host}
        className={styles.gridHost}
        // Named once Tabulator has made it a grid: a name on a div with no role is an ARIA error (aria-prohibited-attr).
        aria-label={ready ? `${widget.metadata.name} grid` : undefined}
        onKeyDown={(e) => {
          const header = e.target as HTMLElement;
          if ((e.key === "Enter" || e.key === " ") && header.classList.contains("tabulator-sortable")) {
            e.preventDefault();
            header.click();
          }
        }}
      />
      {(options?.pagination ?? true) && (
        <div className={styles.gridPager}>
          <span ref={pageCounter} aria-live="polite" />
          <div ref={pager} className={styles.gridPages} role="navigation" aria-label={`${widget.metadata.name} pages`} />
        </div>
      )}
    </div>
  );
}
