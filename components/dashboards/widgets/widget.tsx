"use client";

import { memo } from "react";
import type { ColumnFormats } from "@/lib/dashboards/column-formats";
import type { WidgetResult } from "@/lib/dashboards/contract";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { ChartWidget } from "./chart-widget";
import { ImageWidget, MarkdownWidget, TextWidget } from "./content-widgets";
import { FilterWidget } from "./filter-widget";
import { GridWidget } from "./grid-widget";
import { KpiWidget } from "./kpi-widget";
import { TableWidget } from "./table-widget";
import { widgetState, type WidgetState } from "./widget-state";
import styles from "./widgets.module.css";


export interface WidgetProps {
  widget: WidgetManifest;
  /** The declared formats of the widget's columns (viewColumnFormats): KPI tiles, tables, grids and chart tooltips read numbers in them. */
  formats?: ColumnFormats;
  /** undefined: no data yet (a skeleton is shown). */
  result: WidgetResult | undefined;
  /** A re-query is in flight: the previous result stays, dimmed, under a progress line. */
  loading: boolean;
  /** The organization's IANA zone, for date expressions. */
  timeZone: string;
  /** Filter widgets only: the current value (from the URL); undefined means the manifest default. */
  filterValue?: unknown;
  /** Filter widgets only. */
  onFilterChange?: (value: unknown) => void;
  /** Filter widgets only: fixed by an embed token, so read-only. */
  locked?: boolean;
  /** Filter widgets only: text left in a date box that is not applied (it cannot be read), or null. */
  onFilterUnapplied?: (text: string | null) => void;
  /** Data widgets: for each filter driving this widget whose box holds text that is not applied, which value the figures use. */
  unappliedNotes?: readonly string[];
  /** KPI tiles, charts and tables of a published dashboard: "Alert me" in the card's header opens the alert dialog for this widget. */
  onAlertMe?: (widgetId: string) => void;
}

/** The widgets an alert can watch: a KPI's figure, a chart's series, a table's metric. */
export const ALERTABLE_COMPONENTS: ReadonlySet<string> = new Set(["kpi", "echarts", "table", "tabulator"]);

const NO_FORMATS: ColumnFormats = {};

function Body({ props, state }: { props: WidgetProps; state: WidgetState }) {
  const { widget, result } = props;
  if (state === "skeleton") return <Skeleton component={widget.spec.component} />;
  if (state === "error") {
    return (
      <div className={styles.errorState} role="alert">
        <strong>{widget.spec.component === "filter" ? `${widget.spec.display.filter?.label ?? widget.metadata.name}: options could not load.` : "This widget could not load."}</strong>
        <span>{result?.error?.detail}</span>
      </div>
    );
  }
  if (state === "restricted") {
    return (
      <div className={styles.emptyState} role="note">
        <span aria-hidden="true" className={styles.emptyIcon}>🔒</span>
        {result?.restricted}
      </div>
    );
  }
  if (state === "empty") {
    return (
      <div className={styles.emptyState}>
        <span aria-hidden="true" className={styles.emptyIcon}>∅</span>
        No data for the current filters
      </div>
    );
  }
  const rows = result?.rows ?? [];
  const columns = result?.columns ?? [];
  switch (widget.spec.component) {
    case "echarts":
      return <ChartWidget widget={widget} columns={columns} rows={rows} formats={props.formats ?? NO_FORMATS} />;
    case "kpi":
      return <KpiWidget widget={widget} columns={columns} rows={rows} formats={props.formats ?? NO_FORMATS} />;
    case "table":
      return <TableWidget widget={widget} columns={columns} rows={rows} formats={props.formats ?? NO_FORMATS} />;
    case "tabulator":
      return <GridWidget widget={widget} columns={columns} rows={rows} formats={props.formats ?? NO_FORMATS} />;
    case "filter":
      return (
        <FilterWidget
          widget={widget}
          columns={columns}
          rows={rows}
          timeZone={props.timeZone}
          value={props.filterValue}
          onChange={props.onFilterChange}
          locked={props.locked ?? false}
          onUnappliedChange={props.onFilterUnapplied}
          optionsPending={result === undefined && widget.spec.data !== undefined}
        />
      );
    case "text":
      return <TextWidget widget={widget} />;
    case "image":
      return <ImageWidget widget={widget} />;
    case "markdown":
      return <MarkdownWidget widget={widget} />;
  }
}

function Skeleton({ component }: { component: string }) {
  return (
    <div className={styles.skeleton} aria-hidden="true" data-shape={component === "kpi" ? "kpi" : component === "echarts" ? "chart" : "rows"}>
      <span />
      <span />
      <span />
    </div>
  );
}

/**
 * One dashboard widget as a card filling the grid cell it is given: a title (metadata.name)
 * and the body drawn by `spec.component`, with skeleton, error, empty and re-query states.
 * Text and image widgets have no card chrome, so header and footer bands show through. Memoised: the view keeps
 * each prop's identity while it is unchanged, so a filter change re-renders only the widgets it affects.
 */
export const Widget = memo(function Widget(props: WidgetProps): React.JSX.Element {
  const { widget, loading } = props;
  const component = widget.spec.component;
  const state = widgetState(widget, props.result);
  const bare = component === "text" || component === "image";
  // Filters carry their own label; text and images speak for themselves.
  const titled = !bare && component !== "filter";
  const titleId = `widget-title-${widget.metadata.id}`;
  return (
    <section
      className={`${styles.card} ${bare ? styles.bare : ""} ${loading ? styles.loading : ""}`}
      data-widget-id={widget.metadata.id}
      data-component={component}
      data-state={loading ? "loading" : state}
      aria-busy={loading || state === "skeleton"}
      aria-labelledby={titled ? titleId : undefined}
      // A filter's control carries its label; naming the card too would give two elements that label.
      aria-label={titled || component === "filter" ? undefined : widget.metadata.name}
    >
      {loading && <div className={styles.progress} role="progressbar" aria-label={`Updating ${widget.metadata.name}`} />}
      {titled && (
        <header className={styles.header}>
          <h3 id={titleId} className={styles.title} title={widget.metadata.description ?? widget.metadata.name}>
            {widget.metadata.name}
          </h3>
          {props.onAlertMe && ALERTABLE_COMPONENTS.has(component) && (
            <button type="button" className={styles.alertMe} onClick={() => props.onAlertMe?.(widget.metadata.id)} aria-label={`Alert me on ${widget.metadata.name}`} data-alert-me>
              Alert me
            </button>
          )}
        </header>
      )}
      <div className={`${styles.body} ${styles[`body_${component}`] ?? ""}`}>
        <Body props={props} state={state} />
      </div>
      {component !== "filter" &&
        props.unappliedNotes?.map((note) => (
          <p key={note} className={styles.unappliedNote} role="note" data-unapplied-note>
            {note}
          </p>
        ))}
      {state === "ready" && props.result?.truncated && component !== "filter" && (
        <p className={styles.truncatedNote} role="note">
          {props.result.limit !== undefined
            ? `Showing the first ${props.result.limit.toLocaleString("en-US")} rows; more match, but the dataset's limit is ${props.result.limit.toLocaleString("en-US")}. Narrow the filters (or raise the limit) to see the rest.`
            : `Showing the first ${props.result.rows.length.toLocaleString("en-US")} rows; more match. Narrow the filters to see the rest.`}
        </p>
      )}
    </section>
  );
});
