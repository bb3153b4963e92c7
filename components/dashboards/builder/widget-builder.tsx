"use client";

import { useEffect, useId, useMemo, useRef, useState } from "react";
import type { CatalogTable } from "@/lib/manifest-check/table-names";
import type { Dataset } from "@/lib/manifest/schema";
import { ValueFormatType } from "@/lib/manifest/value-format";
import type { ViewManifest } from "@/lib/dashboards/wiring";
import { type PlainMap, readDashboardValue, readDataset, readWidget, setYamlValue, writeDataset, writeWidget } from "@/lib/manifest/yaml-widget-edit";
import {
  BUILDER_KINDS,
  type BuilderKind,
  type WidgetDraft,
  datasetForTable,
  datasetWithOrder,
  draftFromWidget,
  emptyDraft,
  freeWidgetId,
  nextLayout,
  readsData,
  tabsWithWidget,
  widgetFromDraft,
} from "./widget-draft";
import { useManifestEdits } from "../manifest-edits";
import styles from "./builder.module.css";

interface WidgetBuilderProps {
  /** The last manifest that validated: its datasets and widgets. */
  view: ViewManifest | null;
  ownTables: readonly CatalogTable[];
}

/** `tab`: for a new widget, the tab that lists it (null when the dashboard has no tabs, or for a widget opened). */
type Session = { draft: WidgetDraft; layout: PlainMap; table: CatalogTable | null; opened: boolean; tab: string | null };

const KIND_LABELS: Record<BuilderKind, string> = {
  bar: "Bar chart",
  line: "Line chart",
  area: "Area chart",
  pie: "Pie chart",
  scatter: "Scatter chart",
  heatmap: "Heatmap",
  gauge: "Gauge",
  radar: "Radar chart",
  kpi: "KPI tile",
  table: "Table",
  tabulator: "Grid (sort, group, export)",
  filter: "Filter",
  text: "Text",
  markdown: "Markdown",
  image: "Image",
};

const CARTESIAN = new Set<BuilderKind>(["bar", "line", "area", "scatter", "heatmap"]);
const TABLE_PREFIX = "table:";
/** A pause in typing before the YAML is written: one write (a parse of the manifest) per pause, not per key. */
const WRITE_DELAY_MS = 300;

/** Why a draft cannot be written yet, or null. */
function draftProblem(draft: WidgetDraft): string | null {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(draft.id)) return "The widget id must be 1-64 letters, digits, '-' or '_'.";
  if (draft.name.trim() === "") return "Give the widget a title.";
  if (!readsData(draft.kind)) return draft.kind !== "text" && draft.kind !== "markdown" && draft.content.trim() === "" ? "Give the image a URL." : null;
  if (draft.kind === "filter") return draft.dataset && draft.dimensions.length === 0 ? "Pick the dimension the filter sets." : null;
  if (!draft.dataset) return "Pick a dataset or a table.";
  if (draft.metrics.length === 0 && draft.kind !== "table" && draft.kind !== "tabulator") return "Pick at least one metric.";
  if (draft.dimensions.length + draft.metrics.length === 0) return "Pick at least one column.";
  return null;
}

/**
 * The widget builder (issue 44 §1): pick a source, columns, a sort and limit, the kind, labels and formats; every
 * change is written into the manifest's YAML at once (only what changed: lib/manifest/yaml-widget-edit.ts), so the
 * editor's preview lays it out and the text stays the one source. Data comes from the saved draft, as everywhere
 * in the editor: saving the draft loads the widget's rows.
 */
export function WidgetBuilder({ view, ownTables }: WidgetBuilderProps) {
  const uid = useId();
  // The editor's text as it is now (unsaved edits included); each write is one step of its undo history.
  const { text, apply } = useManifestEdits();
  const [session, setSession] = useState<Session | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const datasets: readonly Dataset[] = useMemo(() => view?.manifest.spec.datasets ?? [], [view]);
  const widgets = useMemo(() => view?.widgets ?? [], [view]);
  const usedTables = new Set(datasets.map((d) => d.from));
  const tables = ownTables.filter((t) => !usedTables.has(t.name));

  // The source's fields: a dataset of the manifest, or the dataset the builder would write for a table.
  const source: Dataset | null = session ? (session.table ? datasetForTable(session.table, session.draft.dataset) : (datasets.find((d) => d.id === session.draft.dataset) ?? null)) : null;
  const otherReaders = session ? widgets.filter((w) => w.spec.data?.dataset === session.draft.dataset && w.metadata.id !== session.draft.id).map((w) => w.metadata.name) : [];

  // Writes wait for a pause in typing; they read the editor's text as it is when they run, never an older one.
  const latestText = useRef(text);
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    latestText.current = text;
  }, [text]);
  useEffect(() => () => void (pending.current && clearTimeout(pending.current)), []);

  function write(next: Session) {
    setSession(next);
    const why = draftProblem(next.draft);
    setProblem(why);
    if (pending.current) clearTimeout(pending.current);
    pending.current = null;
    if (why) return;
    pending.current = setTimeout(() => {
      pending.current = null;
      writeNow(next);
    }, WRITE_DELAY_MS);
  }

  function writeNow(next: Session) {
    const text = latestText.current;
    try {
      let yaml = text;
      const { draft } = next;
      // Each part is written only when it differs: parsing the manifest again is what a write costs.
      const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
      if (readsData(draft.kind)) {
        const existing = readDataset(yaml, draft.dataset);
        const written = existing ?? (next.table ? (datasetForTable(next.table, draft.dataset) as unknown as PlainMap) : null);
        const ordered = written && datasetWithOrder(written, draft);
        if (ordered && !(existing && same(ordered, existing))) yaml = writeDataset(yaml, ordered);
      }
      const opened = readWidget(yaml, draft.id);
      const widget = widgetFromDraft(draft, opened, next.layout);
      if (!same(widget, opened)) yaml = writeWidget(yaml, widget);
      const current = readDashboardValue(yaml, ["spec", "tabs"]);
      const tabs = next.tab === null ? undefined : tabsWithWidget(current, next.tab, draft.id);
      if (tabs && !same(tabs, current)) yaml = setYamlValue(yaml, 0, ["spec", "tabs"], tabs);
      if (yaml !== text) apply(yaml, `Builder wrote widget ${draft.id}`);
    } catch (error) {
      setProblem(`Not written: ${(error as Error).message}. Fix the YAML first.`);
    }
  }

  function openNew() {
    const id = freeWidgetId("chart", new Set(widgets.map((w) => w.metadata.id)));
    setProblem(null);
    setSession({ draft: emptyDraft(id, datasets[0]?.id ?? ""), layout: nextLayout(widgets), table: null, opened: false, tab: view?.manifest.spec.tabs[0]?.id ?? null });
  }

  function openExisting(id: string) {
    const base = id ? readWidget(text, id) : null;
    if (!base) return setSession(null);
    setProblem(null);
    setSession({ draft: draftFromWidget(base, datasets), layout: {}, table: null, opened: true, tab: null });
  }

  const change = (patch: Partial<WidgetDraft>) => session && write({ ...session, draft: { ...session.draft, ...patch } });
  const openable = widgets.filter((w) => w.spec.data === undefined || w.spec.data.kind === "dataset");

  return (
    <section className={styles.builder} aria-label="Widget builder">
      <div className={styles.opener}>
        <button type="button" className="button" onClick={openNew} disabled={view === null}>
          Add a widget
        </button>
        <label className={styles.field} style={{ display: "flex", alignItems: "center", gap: "0.4rem" }}>
          <span>Edit</span>
          <select aria-label="Open a widget in the builder" value={session?.opened ? session.draft.id : ""} onChange={(e) => openExisting(e.target.value)} disabled={view === null}>
            <option value="">a widget…</option>
            {openable.map((w) => (
              <option key={w.metadata.id} value={w.metadata.id}>
                {w.metadata.name} ({w.metadata.id})
              </option>
            ))}
          </select>
        </label>
        {session && (
          <button type="button" className="button" onClick={() => setSession(null)}>
            Close builder
          </button>
        )}
      </div>
      {session && (
        <BuilderFields
          uid={uid}
          session={session}
          datasets={datasets}
          tables={tables}
          source={source}
          otherReaders={otherReaders}
          onChange={change}
          tabs={view?.manifest.spec.tabs.map((t) => ({ id: t.id, name: t.name })) ?? []}
          onTab={(tab) => write({ ...session, tab })}
          onSource={(value) => {
            const table = value.startsWith(TABLE_PREFIX) ? (tables.find((t) => t.name === value.slice(TABLE_PREFIX.length)) ?? null) : null;
            const dataset = table ? freeWidgetId(table.name, new Set(datasets.map((d) => d.id))) : value;
            write({ ...session, table, draft: { ...session.draft, dataset, dimensions: [], metrics: [], sort: null, limit: null } });
          }}
        />
      )}
      {session && problem && (
        <p className={styles.problem} role="status">
          {problem}
        </p>
      )}
      {session && !problem && (
        <p className={styles.note} role="status" data-testid="builder-written">
          Written to the YAML as widget <code>{session.draft.id}</code>. Save the draft to load its data in the preview.
        </p>
      )}
    </section>
  );
}

interface FieldsProps {
  uid: string;
  session: Session;
  datasets: readonly Dataset[];
  tables: readonly CatalogTable[];
  source: Dataset | null;
  otherReaders: string[];
  onChange: (patch: Partial<WidgetDraft>) => void;
  tabs: { id: string; name: string }[];
  onTab: (tab: string) => void;
  onSource: (value: string) => void;
}

function BuilderFields({ uid, session, datasets, tables, source, otherReaders, onChange, tabs, onTab, onSource }: FieldsProps) {
  const { draft } = session;
  const id = (name: string) => `${uid}-${name}`;
  const toggle = (list: string[], value: string, on: boolean) => (on ? [...list, value] : list.filter((v) => v !== value));
  const columns = [...draft.dimensions, ...draft.metrics];
  const dataKind = readsData(draft.kind);
  return (
    <div className={styles.fields}>
      <div className={styles.field}>
        <label htmlFor={id("name")}>Title</label>
        <input id={id("name")} value={draft.name} onChange={(e) => onChange({ name: e.target.value })} />
      </div>
      <div className={styles.field}>
        <label htmlFor={id("id")}>Widget id</label>
        <input id={id("id")} value={draft.id} readOnly={session.opened} onChange={(e) => onChange({ id: e.target.value })} />
      </div>
      <div className={styles.field}>
        <label htmlFor={id("kind")}>Kind</label>
        <select id={id("kind")} value={draft.kind} onChange={(e) => onChange({ kind: e.target.value as BuilderKind })}>
          {BUILDER_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {KIND_LABELS[kind]}
            </option>
          ))}
        </select>
      </div>
      {session.tab !== null && (
        <div className={styles.field}>
          <label htmlFor={id("tab")}>Tab</label>
          <select id={id("tab")} value={session.tab} onChange={(e) => onTab(e.target.value)}>
            {tabs.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </div>
      )}
      {dataKind && (
        <div className={styles.field}>
          <label htmlFor={id("source")}>Dataset or table</label>
          <select id={id("source")} value={session.table ? `${TABLE_PREFIX}${session.table.name}` : draft.dataset} onChange={(e) => onSource(e.target.value)}>
            <option value="">Pick one…</option>
            {datasets.map((d) => (
              <option key={d.id} value={d.id}>
                Dataset {d.id}
              </option>
            ))}
            {tables.map((t) => (
              <option key={t.name} value={`${TABLE_PREFIX}${t.name}`}>
                Table {t.name}
              </option>
            ))}
          </select>
        </div>
      )}
      {dataKind && source && (
        <>
          <fieldset className={styles.choices}>
            <legend>Dimensions</legend>
            {source.dimensions.map((d) => (
              <label key={d.id}>
                <input type="checkbox" checked={draft.dimensions.includes(d.id)} onChange={(e) => onChange({ dimensions: toggle(draft.dimensions, d.id, e.target.checked) })} />
                {d.label ?? d.id}
              </label>
            ))}
          </fieldset>
          <fieldset className={styles.choices}>
            <legend>Metrics</legend>
            {source.metrics.map((m) => (
              <label key={m.id}>
                <input type="checkbox" checked={draft.metrics.includes(m.id)} onChange={(e) => onChange({ metrics: toggle(draft.metrics, m.id, e.target.checked) })} />
                {m.label ?? m.id}
                {m.format ? <span className="muted"> · {typeof m.format === "string" ? m.format : m.format.type}</span> : null}
              </label>
            ))}
          </fieldset>
          <div className={styles.field}>
            <label htmlFor={id("sort")}>Sort by</label>
            <select
              id={id("sort")}
              value={draft.sort?.column ?? ""}
              onChange={(e) => onChange({ sort: e.target.value ? { column: e.target.value, dir: draft.sort?.dir ?? "desc" } : null })}
            >
              <option value="">No order</option>
              {columns.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          </div>
          <div className={styles.field}>
            <label htmlFor={id("dir")}>Direction</label>
            <select id={id("dir")} value={draft.sort?.dir ?? "desc"} disabled={!draft.sort} onChange={(e) => draft.sort && onChange({ sort: { ...draft.sort, dir: e.target.value as "asc" | "desc" } })}>
              <option value="desc">Largest first</option>
              <option value="asc">Smallest first</option>
            </select>
          </div>
          <div className={styles.field}>
            <label htmlFor={id("limit")}>Row limit</label>
            <input
              id={id("limit")}
              type="number"
              min={1}
              max={100000}
              value={draft.limit ?? ""}
              onChange={(e) => onChange({ limit: e.target.value === "" ? null : Math.max(1, Math.min(100_000, Math.trunc(Number(e.target.value)))) })}
            />
          </div>
          <p className={styles.note}>
            Sort, limit and formats belong to dataset <code>{draft.dataset}</code>
            {otherReaders.length > 0 ? <>, which {otherReaders.join(", ")} also read: they change for them too.</> : "."}
          </p>
        </>
      )}
      {CARTESIAN.has(draft.kind) && (
        <>
          <div className={styles.field}>
            <label htmlFor={id("x")}>X axis label</label>
            <input id={id("x")} value={draft.xLabel} onChange={(e) => onChange({ xLabel: e.target.value })} />
          </div>
          <div className={styles.field}>
            <label htmlFor={id("y")}>Y axis label</label>
            <input id={id("y")} value={draft.yLabel} onChange={(e) => onChange({ yLabel: e.target.value })} />
          </div>
        </>
      )}
      {draft.kind === "kpi" && (
        <div className={styles.field}>
          <label htmlFor={id("format")}>Format</label>
          <select id={id("format")} value={draft.kpiFormat} onChange={(e) => onChange({ kpiFormat: e.target.value as WidgetDraft["kpiFormat"] })}>
            {ValueFormatType.options.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </div>
      )}
      {(draft.kind === "text" || draft.kind === "markdown") && (
        <div className={styles.field}>
          <label htmlFor={id("content")}>Content</label>
          <textarea id={id("content")} rows={4} value={draft.content} onChange={(e) => onChange({ content: e.target.value })} />
        </div>
      )}
      {draft.kind === "image" && (
        <>
          <div className={styles.field}>
            <label htmlFor={id("url")}>Image URL</label>
            <input id={id("url")} value={draft.content} onChange={(e) => onChange({ content: e.target.value })} />
          </div>
          <div className={styles.field}>
            <label htmlFor={id("alt")}>Alternative text</label>
            <input id={id("alt")} value={draft.imageAlt} onChange={(e) => onChange({ imageAlt: e.target.value })} />
          </div>
        </>
      )}
    </div>
  );
}
