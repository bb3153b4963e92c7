"use client";

import { useCallback, useEffect, useMemo, useRef, useState, type CSSProperties } from "react";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import type { WidgetManifest } from "@/lib/manifest/schema";
import type { ClickContext } from "@/lib/manifest-check/interactions";
import type { ChartData } from "@/lib/dashboards/chart-option";
import { type ChartClick, type ClickChip, chipsAfterClick, clickedRows, planClick, searchAfter, searchUndoing, stillApplied } from "@/lib/dashboards/chart-clicks";
import { ClickChips, ClickNote, useClickChips } from "./click-chips";
import { ChartClickContext } from "./chart-click-context";
import { Widget } from "./widgets/widget";
import { AlertDialog } from "@/components/alerts/alert-dialog";
import { alertColumns } from "@/components/alerts/alert-columns";
import { DashboardGrid, gridHeight } from "./dashboard-grid";
import { failedResults, queryWidgets, retryWhileBusy, type QueryTarget, type WidgetResults } from "./query-client";
import { dataWidgetIds, dependencyKey, filtersAffecting, filtersFromParams, isDataWidget, pageRegions, tabFromParams, viewColumnFormats, visibleWidgetIds, withFilterParam, type ViewManifest } from "@/lib/dashboards/wiring";
import { describeAppliedDate, effectiveValue } from "@/lib/dashboards/filter-values";
import styles from "./dashboards.module.css";

export interface DashboardViewProps {
  view: ViewManifest;
  target: QueryTarget;
  /** Widget data the server computed for `initialFilters` (the first paint needs no request). */
  initialResults: WidgetResults;
  initialFilters: Record<string, unknown>;
  timeZone: string;
  /** Filter values fixed by an embed grant: shown read-only, never sent differently. */
  lockedFilters?: Record<string, unknown>;
  /** What chart clicks may do for this viewer (the page's loader computes it); without it clicks do nothing. */
  clicks?: ClickContext;
  /**
   * A re-query that failed as a whole: true when the caller takes care of it (an expired embed link
   * shows one banner); the widgets then keep what they show and are fetched again when `target` changes.
   */
  onQueryError?: (error: unknown) => boolean;
  /** A published dashboard for a signed-in viewer: "Alert me" on its KPI tiles, charts and tables (issue 45). */
  alerts?: { dashboardId: string };
}

const DEFAULT_BAND_HEIGHT = 56;
/** Label, input and the resolved date range under it. */
const MIN_FILTER_HEIGHT = 100;
const NO_LOCKS: Record<string, unknown> = {};
const NO_NOTES: readonly string[] = [];

/**
 * A dashboard on screen: header band, tabs, filter panel, grid and footer band. Filter values
 * and the tab live in the URL (shareable, back button works). Whenever they change, exactly the
 * visible widgets whose inputs changed are fetched in one round trip; a newer change aborts the
 * older request so a slow answer never overwrites a newer one.
 */
export function DashboardView({ view, target, initialResults, initialFilters, timeZone, lockedFilters = NO_LOCKS, clicks, onQueryError, alerts }: DashboardViewProps) {
  const searchParams = useSearchParams();
  const pathname = usePathname();
  const router = useRouter();
  const queryErrorHandler = useRef(onQueryError);
  useEffect(() => {
    queryErrorHandler.current = onQueryError;
  }, [onQueryError]);
  const urlFilters = useMemo(() => filtersFromParams(view, searchParams), [view, searchParams]);
  const filters = useMemo(() => ({ ...urlFilters, ...lockedFilters }), [urlFilters, lockedFilters]);
  const filtersKey = JSON.stringify(filters);
  const regions = useMemo(() => pageRegions(view, tabFromParams(searchParams)), [view, searchParams]);
  const byId = useMemo(() => new Map(view.widgets.map((w) => [w.metadata.id, w])), [view]);
  const visibleDataKey = dataWidgetIds(view, visibleWidgetIds(regions)).join("\n");

  const [results, setResults] = useState<WidgetResults>(initialResults);
  const [loading, setLoading] = useState<ReadonlySet<string>>(new Set());
  // Seconds until the next attempt while the server answers busy (503), else null.
  const [busyFor, setBusyFor] = useState<number | null>(null);
  // Per widget: the dependency key its shown data was computed for.
  const computedFor = useRef<Map<string, string>>(null!);
  if (computedFor.current === null) {
    const initial = { ...initialFilters, ...lockedFilters };
    computedFor.current = new Map(Object.keys(initialResults).map((id) => [id, dependencyKey(view.widgets, id, initial)]));
  }
  const inFlight = useRef<AbortController | null>(null);
  // Compared by value: callers may pass a fresh object on every render.
  const targetKey = JSON.stringify(target);

  useEffect(() => {
    const current = JSON.parse(filtersKey) as Record<string, unknown>;
    const visible = visibleDataKey ? visibleDataKey.split("\n") : [];
    const keys = new Map(visible.map((id) => [id, dependencyKey(view.widgets, id, current)]));
    const stale = [...keys].filter(([id, key]) => computedFor.current.get(id) !== key).map(([id]) => id);
    inFlight.current?.abort();
    inFlight.current = null;
    setLoading(new Set(stale));
    setBusyFor(null);
    if (stale.length === 0) return;
    const controller = new AbortController();
    inFlight.current = controller;
    const settle = (fresh: WidgetResults) => {
      if (controller.signal.aborted) return;
      for (const id of stale) computedFor.current.set(id, keys.get(id)!);
      setResults((previous) => ({ ...previous, ...fresh }));
      setLoading(new Set());
      inFlight.current = null;
    };
    // A busy server (503) is asked again after its Retry-After, with back-off, and the viewer is told so.
    const waiting = (seconds: number | null) => {
      if (!controller.signal.aborted) setBusyFor(seconds);
    };
    retryWhileBusy(() => queryWidgets(JSON.parse(targetKey) as QueryTarget, current, stale, controller.signal), controller.signal, waiting).then(settle, (error: unknown) => {
      if (controller.signal.aborted) return;
      setBusyFor(null);
      if (queryErrorHandler.current?.(error)) {
        setLoading(new Set());
        inFlight.current = null;
        return;
      }
      settle(failedResults(stale, error instanceof Error ? `Could not load this widget: ${error.message}` : "Could not load this widget"));
    });
  }, [filtersKey, visibleDataKey, view, targetKey]);

  useEffect(() => () => inFlight.current?.abort(), []);

  const navigate = useCallback(
    (search: string) => {
      // The History API keeps Next's router in sync without asking the server to render the page again.
      window.history.pushState(null, "", `${pathname}${search}${window.location.hash}`);
    },
    [pathname],
  );
  const changeFilter = useCallback(
    (filterId: string, value: unknown) => {
      if (filterId in lockedFilters) return;
      navigate(withFilterParam(window.location.search, filterId, value));
    },
    [lockedFilters, navigate],
  );
  const changeTab = useCallback(
    (tabId: string) => {
      const params = new URLSearchParams(window.location.search);
      params.set("tab", tabId);
      navigate(`?${params}`);
    },
    [navigate],
  );

  // Date boxes left holding text that cannot be read, by filter id: those filters still apply their previous value.
  const [unapplied, setUnapplied] = useState<Readonly<Record<string, string>>>({});
  const reportUnapplied = useCallback((filterId: string, text: string | null) => {
    setUnapplied((previous) => {
      if ((previous[filterId] ?? null) === text) return previous;
      const next = { ...previous };
      if (text === null) delete next[filterId];
      else next[filterId] = text;
      return next;
    });
  }, []);
  /** What a data widget's figures use for each filter driving it whose box holds text that is not applied. */
  const unappliedNotes = (widgetId: string): readonly string[] => {
    const pending = Object.keys(unapplied);
    if (pending.length === 0) return NO_NOTES;
    const driving = filtersAffecting(view.widgets, widgetId);
    return pending
      .filter((filterId) => driving.includes(filterId))
      .map((filterId) => {
        const filter = byId.get(filterId);
        const display = filter?.spec.display.filter;
        const applied = describeAppliedDate(effectiveValue(filters[filterId], display), timeZone);
        return `${display?.label ?? filter?.metadata.name ?? filterId}: showing ${applied}; “${unapplied[filterId]}” is not applied.`;
      });
  };

  // Chart clicks (issue 27 §2): filters set by a click show as chips until undone or changed by hand.
  const [chips, setChips] = useClickChips(pathname);
  const [clickNote, setClickNote] = useState<string | null>(null);
  const search = searchParams.toString();
  const shownChips = chips.filter((chip) => stillApplied(search, chip.changes));
  const pointClicked = (widget: WidgetManifest, click: ChartClick, data: ChartData) => {
    if (!clicks || !widget.spec.on_click) return;
    const plan = planClick(widget, clickedRows(widget, data, click), click.name, {
      context: clicks,
      urlFilters,
      locked: new Set(Object.keys(lockedFilters)),
      anonymous: target.kind !== "dashboard",
    });
    if (plan.kind === "none") return setClickNote(plan.reason || null);
    setClickNote(plan.skipped.length > 0 ? `${plan.skipped.join("; ")}.` : null);
    if (plan.kind === "open") return router.push(plan.href);
    navigate(searchAfter(window.location.search, plan.changes, plan.tab));
    if (plan.changes.length === 0) return;
    const chip = { id: Date.now(), source: widget.metadata.name, changes: plan.changes };
    setChips((previous) => chipsAfterClick(previous, shownChips, chip));
  };
  // One handler for the charts' whole life, so a chart binds its click once; it calls the latest pointClicked.
  const latestPointClicked = useRef(pointClicked);
  useEffect(() => {
    latestPointClicked.current = pointClicked;
  });
  const chartClicked = useCallback((widget: WidgetManifest, click: ChartClick, data: ChartData) => latestPointClicked.current(widget, click, data), []);
  const undoChip = (chip: ClickChip) => {
    navigate(searchUndoing(window.location.search, chip.changes));
    setChips((previous) => previous.filter((c) => c.id !== chip.id));
    setClickNote(null);
  };

  // Props that keep their identity from one render to the next, so a filter change re-renders only the widgets
  // whose data or state changed (Widget is memoised): every chart re-rendering would rebuild and redraw it.
  const formatsById = useMemo(() => new Map(view.widgets.map((w) => [w.metadata.id, viewColumnFormats(view, w)])), [view]);
  const filterHandlers = useMemo(
    () =>
      new Map(
        view.widgets
          .filter((w) => w.spec.component === "filter")
          .map((w) => {
            const id = w.metadata.id;
            return [id, { onFilterChange: (value: unknown) => changeFilter(id, value), onFilterUnapplied: (text: string | null) => reportUnapplied(id, text) }];
          }),
      ),
    [view, changeFilter, reportUnapplied],
  );

  // "Alert me": the dialog for one widget at a time, prefilled with the filters on screen.
  const [alertFor, setAlertFor] = useState<string | null>(null);
  const alertMe = useCallback((widgetId: string) => setAlertFor(widgetId), []);
  const alertWidget = alertFor ? byId.get(alertFor) : undefined;

  // The Widget draws its own card, title and loading/empty/error states; the shell only places it.
  const renderWidget = (w: WidgetManifest) => {
    const id = w.metadata.id;
    const filterProps =
      w.spec.component === "filter"
        ? {
            filterValue: id in filters ? filters[id] : undefined,
            ...filterHandlers.get(id),
            locked: id in lockedFilters,
          }
        : {};
    const notes = isDataWidget(w) && w.spec.component !== "filter" ? unappliedNotes(id) : NO_NOTES;
    return <Widget widget={w} formats={formatsById.get(id)} result={results[id]} loading={loading.has(id)} timeZone={timeZone} unappliedNotes={notes} onAlertMe={alerts ? alertMe : undefined} {...filterProps} />;
  };

  const config = view.manifest.spec.config;
  const panel = config?.filterPanel;
  const [panelOpen, setPanelOpen] = useState(!(panel?.collapsible && panel.defaultCollapsed));
  const panelFilters = regions.filters.map((id) => byId.get(id)).filter((w): w is WidgetManifest => w !== undefined);
  const left = panel?.position === "left";
  const lockedCount = panelFilters.filter((w) => w.metadata.id in lockedFilters).length;

  const filterPanel =
    panelFilters.length > 0 ? (
      <aside
        className={`${styles.filterPanel} ${left ? styles.filterPanelLeft : styles.filterPanelTop}`}
        aria-label="Filters"
        style={{
          // Authored colours are the light scheme's: dashboards.module.css applies them only there.
          "--authored-background": panel?.background,
          padding: panel?.padding,
          ...(left && panelOpen ? { width: panel?.width ?? 260 } : {}),
        } as CSSProperties}
      >
        {panel?.collapsible && (
          <button type="button" className={styles.panelToggle} aria-expanded={panelOpen} aria-controls="dashboard-filters" onClick={() => setPanelOpen((open) => !open)}>
            <span aria-hidden="true">{panelOpen ? "▾" : "▸"}</span> Filters
            {!panelOpen && Object.keys(urlFilters).length > 0 && <span className={styles.badge}>{Object.keys(urlFilters).length} set</span>}
          </button>
        )}
        <div id="dashboard-filters" className={styles.filterList} hidden={!panelOpen} style={{ gap: panel?.gap }}>
          {panelFilters.map((w) => (
            // Widgets fill a sized box (they are CSS size containers): a filter gets its grid height.
            <div key={w.metadata.id} className={styles.filterItem} style={{ height: Math.max(gridHeight(w.spec.layout.h), MIN_FILTER_HEIGHT) }}>
              {renderWidget(w)}
            </div>
          ))}
          {lockedCount > 0 && <p className={styles.lockedNote}>{lockedCount === 1 ? "One filter is" : `${lockedCount} filters are`} fixed by the page that embeds this dashboard.</p>}
        </div>
      </aside>
    ) : null;

  const band = (ids: string[], kind: "header" | "footer") => {
    const cfg = kind === "header" ? config?.header : config?.footer;
    const widgets = ids.map((id) => byId.get(id)).filter((w): w is WidgetManifest => w !== undefined);
    if (widgets.length === 0) return null;
    const Tag = kind === "header" ? "header" : "footer";
    return (
      <Tag className={`${styles.band} ${kind === "header" ? styles.bandHeader : styles.bandFooter}`} style={{ "--band-height": `${cfg?.height ?? DEFAULT_BAND_HEIGHT}px`, "--authored-background": cfg?.background } as CSSProperties} data-testid={`dashboard-${kind}`}>
        {widgets.map((w) => (
          <div key={w.metadata.id} className={styles.bandItem}>
            {renderWidget(w)}
          </div>
        ))}
      </Tag>
    );
  };

  const gridWidgets = useMemo(() => regions.grid.map((id) => byId.get(id)).filter((w): w is WidgetManifest => w !== undefined), [regions, byId]);

  return (
    <ChartClickContext.Provider value={clicks ? chartClicked : null}>
      <div className={styles.dashboard} data-testid="dashboard" data-tab={regions.tab}>
        {band(regions.header, "header")}
        {regions.tabs.length > 1 && (
          <nav className={styles.tabs} role="tablist" aria-label="Dashboard tabs">
            {regions.tabs.map((t) => (
              <button
                key={t.id}
                type="button"
                role="tab"
                id={`tab-${t.id}`}
                aria-selected={t.id === regions.tab}
                aria-controls="dashboard-tabpanel"
                // Roving focus (WAI-ARIA tabs): Tab reaches the selected tab, arrow keys move between tabs.
                tabIndex={t.id === regions.tab ? 0 : -1}
                className={styles.tab}
                onClick={() => changeTab(t.id)}
                onKeyDown={(event) => {
                  const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
                  if (step === 0) return;
                  event.preventDefault();
                  const index = regions.tabs.findIndex((x) => x.id === t.id);
                  const next = regions.tabs[(index + step + regions.tabs.length) % regions.tabs.length];
                  changeTab(next.id);
                  document.getElementById(`tab-${next.id}`)?.focus();
                }}
              >
                {t.name}
              </button>
            ))}
          </nav>
        )}
        <div className={left ? styles.bodyLeft : styles.bodyTop}>
          {filterPanel}
          <div id="dashboard-tabpanel" role={regions.tabs.length > 1 ? "tabpanel" : undefined} aria-labelledby={regions.tabs.length > 1 ? `tab-${regions.tab}` : undefined} className={styles.gridArea}>
            <ClickChips chips={shownChips} onUndo={undoChip} />
            <ClickNote note={clickNote} onDismiss={() => setClickNote(null)} />
            {busyFor !== null && (
              <p className={styles.busyNote} role="status" data-testid="busy-note">
                The server is busy, retrying in {busyFor} s…
              </p>
            )}
            <DashboardGrid widgets={gridWidgets} breakpoints={view.manifest.spec.responsive?.breakpoints} renderWidget={renderWidget} />
          </div>
        </div>
        {band(regions.footer, "footer")}
      </div>
      {alerts && alertWidget && (
        <AlertDialog dashboardId={alerts.dashboardId} widget={alertWidget} {...alertColumns(alertWidget, results[alertWidget.metadata.id])} filters={urlFilters} onClose={() => setAlertFor(null)} />
      )}
    </ChartClickContext.Provider>
  );
}
