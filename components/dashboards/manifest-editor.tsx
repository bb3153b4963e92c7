"use client";

import { useCallback, useDeferredValue, useEffect, useMemo, useRef, useState } from "react";
import { useRouter } from "next/navigation";
import CodeMirror, { EditorView, type ReactCodeMirrorRef } from "@uiw/react-codemirror";
import { yaml } from "@codemirror/lang-yaml";
import { linter, lintGutter, type Diagnostic } from "@codemirror/lint";
import { autocompletion, type CompletionContext, type CompletionResult } from "@codemirror/autocomplete";
import { Transaction, type Text } from "@codemirror/state";
import { isolateHistory, redo, redoDepth, undo, undoDepth } from "@codemirror/commands";
import { pageNonce } from "@/components/page-nonce";
import { formatPath, manifestErrorsFromItems, type ManifestError } from "@/lib/manifest/errors";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { ownClickContext } from "@/lib/manifest-check/interactions";
import type { SqlPolicy } from "@/lib/manifest-check/references";
import { type CatalogTable, catalogSqlPolicy, nameCompletions, tableCatalog, type TableCatalog } from "@/lib/manifest-check/table-names";
import { DashboardView } from "./dashboard-view";
import { RollupStatus } from "./rollup-status";
import { WidgetBuilder } from "./builder/widget-builder";
import { LayoutMode } from "./layout-mode";
import { type ManifestEdits, ManifestEditsContext } from "./manifest-edits";
import { textChange } from "@/lib/manifest/text-change";
import { publishDashboard, updateDashboard, type DashboardRollups } from "@/lib/dashboards/contract";
import { ApiClientError, callApi } from "@/components/api-client";
import type { ValidationItem } from "@/lib/errors";
import type { WidgetResults } from "./query-client";
import type { ViewManifest } from "@/lib/dashboards/wiring";
import styles from "./dashboards.module.css";

interface ManifestEditorProps {
  dashboardId: string;
  slug: string;
  initialYaml: string;
  /** The saved draft as the server validated it; null when it no longer passes (then initialProblems says why). */
  initialView: ViewManifest | null;
  /**
   * The server's problems with the saved draft (422 items): the checks the browser cannot run (user SQL
   * against the allow-list on PostgreSQL's parser) included. Shown while the text is the one they are about.
   */
  initialProblems?: ValidationItem[];
  initialResults: WidgetResults;
  initialFilters: Record<string, unknown>;
  timeZone: string;
  /** The saved draft's rollups as the page's loader read them, so the table is in the first paint; null: read after it. */
  initialRollups?: DashboardRollups | null;
  /** The organization's own tables (issue 42), for the name check and completion beside the warehouse's. */
  ownTables?: readonly CatalogTable[];
}

type Check = { ok: true; view: ViewManifest } | { ok: false; errors: ManifestError[] };

function check(text: string, sqlPolicy: SqlPolicy): Check {
  const result = parseDashboardYaml(text, { sqlPolicy });
  return result.ok ? { ok: true, view: { manifest: result.dashboard.manifest, widgets: result.dashboard.widgets } } : { ok: false, errors: result.errors };
}

function offsetOf(doc: Text, line: number, column: number): number {
  const l = doc.line(Math.min(Math.max(line, 1), doc.lines));
  return Math.min(l.from + Math.max(column - 1, 0), l.to);
}

/** Manifest errors as editor diagnostics, underlining from the reported position to the end of its line. */
const manifestLinter = (sqlPolicy: SqlPolicy) => linter(
  (view) => {
    const result = parseDashboardYaml(view.state.doc.toString(), { sqlPolicy });
    if (result.ok) return [];
    return result.errors.map((e): Diagnostic => {
      const from = offsetOf(view.state.doc, e.line, e.column);
      const to = Math.max(from, view.state.doc.lineAt(from).to);
      const where = formatPath(e.path);
      return { from, to, severity: "error", message: where ? `${where}: ${e.message}` : e.message };
    });
  },
  { delay: 250 },
);

/** Lines either side of the cursor read for the FROM items that give an alias its table. */
const COMPLETION_CONTEXT_LINES = 20;

/** Table and column names where a name is typed (or on Ctrl-Space): the catalog's tables, or after `t.` the columns of t. */
function nameCompletionSource(catalog: TableCatalog) {
  return (context: CompletionContext): CompletionResult | null => {
    const line = context.state.doc.lineAt(context.pos);
    const before = line.text.slice(0, context.pos - line.from);
    const doc = context.state.doc;
    const first = doc.line(Math.max(1, line.number - COMPLETION_CONTEXT_LINES));
    const last = doc.line(Math.min(doc.lines, line.number + COMPLETION_CONTEXT_LINES));
    const found = nameCompletions(before, catalog, doc.sliceString(first.from, last.to), context.explicit);
    if (!found) return null;
    return {
      from: line.from + found.from,
      options: found.options.map((o) => ({ label: o.label, type: o.kind === "table" ? "class" : "property", detail: o.detail })),
      validFor: /^[A-Za-z0-9_$]*$/,
    };
  };
}

/**
 * YAML on the left with validation as you type (diagnostics in the editor and a line-numbered
 * list), the dashboard on the right. The preview lays out what is typed; its data comes from the
 * saved draft through the query endpoint, so saving refreshes every widget.
 */
export function ManifestEditor({ dashboardId, slug, initialYaml, initialView, initialProblems = [], initialResults, initialFilters, timeZone, initialRollups = null, ownTables = [] }: ManifestEditorProps) {
  const router = useRouter();
  const editor = useRef<ReactCodeMirrorRef>(null);
  const [text, setText] = useState(initialYaml);
  const [saved, setSaved] = useState(initialYaml);
  const [revision, setRevision] = useState(0);
  // Bumped by every save and publish: the rollups' states and the widgets they answer are read again.
  const [rollupsRevision, setRollupsRevision] = useState(0);
  const [busy, setBusy] = useState<"save" | "publish" | null>(null);
  const [message, setMessage] = useState<{ tone: "error" | "success"; text: string } | null>(null);
  const deferred = useDeferredValue(text);
  const catalog = useMemo(() => tableCatalog(ownTables), [ownTables]);
  const sqlPolicy = useMemo(() => catalogSqlPolicy(catalog), [catalog]);
  const result = useMemo(() => check(deferred, sqlPolicy), [deferred, sqlPolicy]);
  // The preview keeps the last manifest that validated while the text has problems.
  const [lastValid, setLastValid] = useState<ViewManifest | null>(initialView);
  // The preview's clicks act within this dashboard; opening another one is for the saved page.
  const previewClicks = useMemo(
    () => lastValid && ownClickContext(lastValid.widgets, new Map(lastValid.manifest.spec.datasets.map((d) => [d.id, d])), lastValid.manifest.spec.tabs.map((t) => t.id), slug),
    [lastValid, slug],
  );
  // The server's verdict on a text the browser found valid: the saved draft's problems, or a refused save's.
  const [serverProblems, setServerProblems] = useState<{ text: string; errors: ManifestError[] } | null>(
    initialProblems.length > 0 ? { text: initialYaml, errors: manifestErrorsFromItems(initialProblems) } : null,
  );
  // Whether the saved draft fails the server's checks: its queries would fail, so nothing is previewed.
  const [savedInvalid, setSavedInvalid] = useState(initialProblems.length > 0);
  const [checked, setChecked] = useState<Check>(result);
  if (checked !== result) {
    setChecked(result);
    if (result.ok) setLastValid(result.view);
  }
  const dirty = text !== saved;

  // One undo history for typing, the builder and layout mode: CodeMirror's own (see manifest-edits.ts).
  const [undoSteps, setUndoSteps] = useState(0);
  const [redoSteps, setRedoSteps] = useState(0);
  const [arranging, setArranging] = useState(false);
  const [editAnnouncement, setEditAnnouncement] = useState("");
  const applyEdit = useCallback((next: string, label: string) => {
    const view = editor.current?.view;
    const change = view && textChange(view.state.doc.toString(), next);
    if (!view || !change) return;
    view.dispatch({ changes: change, annotations: [isolateHistory.of("full"), Transaction.userEvent.of("input.manifest-edit")] });
    setEditAnnouncement(label);
  }, []);
  const undoEdit = useCallback(() => {
    const view = editor.current?.view;
    if (view) undo(view);
  }, []);
  const redoEdit = useCallback(() => {
    const view = editor.current?.view;
    if (view) redo(view);
  }, []);
  const edits = useMemo<ManifestEdits>(
    () => ({ text, apply: applyEdit, undo: undoEdit, redo: redoEdit, canUndo: undoSteps > 0, canRedo: redoSteps > 0 }),
    [text, applyEdit, undoEdit, redoEdit, undoSteps, redoSteps],
  );
  const shownProblems = !result.ok ? result.errors : serverProblems?.text === text ? serverProblems.errors : null;

  // Unsaved changes: the browser asks before reloading or leaving, and in-app links ask too.
  useEffect(() => {
    if (!dirty) return;
    const beforeUnload = (event: BeforeUnloadEvent) => event.preventDefault();
    const onClick = (event: MouseEvent) => {
      const link = (event.target as Element | null)?.closest?.("a[href]");
      if (link && !link.getAttribute("target") && !window.confirm("You have unsaved changes. Leave without saving?")) {
        event.preventDefault();
        event.stopPropagation();
      }
    };
    window.addEventListener("beforeunload", beforeUnload);
    document.addEventListener("click", onClick, true);
    return () => {
      window.removeEventListener("beforeunload", beforeUnload);
      document.removeEventListener("click", onClick, true);
    };
  }, [dirty]);

  const jumpTo = useCallback((e: ManifestError) => {
    const view = editor.current?.view;
    if (!view) return;
    const at = offsetOf(view.state.doc, e.line, e.column);
    view.dispatch({ selection: { anchor: at }, effects: EditorView.scrollIntoView(at, { y: "center" }) });
    view.focus();
  }, []);

  async function save(): Promise<boolean> {
    try {
      await callApi(updateDashboard, { params: { id: dashboardId }, body: { spec_yaml: text } });
    } catch (error) {
      // The server's checks go further than the browser's: its items join the problem list, with their lines.
      if (error instanceof ApiClientError && error.status === 422 && Array.isArray(error.detail)) {
        const items = (error.detail as ValidationItem[]).filter((item) => item.line !== undefined && item.loc.includes("spec_yaml"));
        if (items.length > 0) setServerProblems({ text, errors: manifestErrorsFromItems(items) });
      }
      setMessage({ tone: "error", text: `Not saved: ${(error as Error).message}` });
      return false;
    }
    setServerProblems(null);
    setSavedInvalid(false);
    setSaved(text);
    setRevision((r) => r + 1);
    setRollupsRevision((r) => r + 1);
    return true;
  }

  async function onSave() {
    setBusy("save");
    setMessage(null);
    try {
      if (await save()) setMessage({ tone: "success", text: "Draft saved" });
    } finally {
      setBusy(null);
    }
  }

  async function onPublish() {
    setBusy("publish");
    setMessage(null);
    try {
      if (dirty && !(await save())) return;
      const published = await callApi(publishDashboard, { params: { id: dashboardId } });
      setMessage({ tone: "success", text: `Published version ${published.published_version}` });
      setRollupsRevision((r) => r + 1);
      router.refresh();
    } catch (error) {
      setMessage({ tone: "error", text: `Not published: ${(error as Error).message}` });
    } finally {
      setBusy(null);
    }
  }

  // CodeMirror writes its styles into <style> elements, which the CSP admits only with the page's nonce.
  const extensions = useMemo(
    () => [
      yaml(),
      manifestLinter(sqlPolicy),
      // The names are the editor's only completions, so they override the language's: a source given as language data
      // was never asked in the browser (no list showed, even on Ctrl-Space).
      autocompletion({ override: [nameCompletionSource(catalog)] }),
      lintGutter(),
      EditorView.lineWrapping,
      EditorView.cspNonce.of(pageNonce()),
      // The name belongs on the editable element (role textbox) itself: a label on the wrapper names no input.
      // axe-core counts a contenteditable as focusable only with a tabindex; its scroller otherwise reads as a scroll box no key reaches.
      EditorView.contentAttributes.of({ "aria-label": "Dashboard manifest (YAML)", tabindex: "0" }),
    ],
    [catalog, sqlPolicy],
  );

  return (
    <ManifestEditsContext.Provider value={edits}>
      <div className={styles.editor}>
        <section className={styles.editorPane} aria-label="Manifest">
          <div className={styles.actions} style={{ marginLeft: 0 }}>
            <button type="button" className="button" onClick={undoEdit} disabled={undoSteps === 0} aria-keyshortcuts="Control+Z" data-testid="manifest-undo">
              Undo
            </button>
            <button type="button" className="button" onClick={redoEdit} disabled={redoSteps === 0} aria-keyshortcuts="Control+Shift+Z" data-testid="manifest-redo">
              Redo
            </button>
            <button type="button" className="button" onClick={onSave} disabled={busy !== null || !dirty || !result.ok}>
              {busy === "save" ? "Saving…" : dirty ? "Save draft" : "Saved"}
            </button>
            <button type="button" className="button primary" onClick={onPublish} disabled={busy !== null || shownProblems !== null || (savedInvalid && !dirty)}>
              {busy === "publish" ? "Publishing…" : "Publish"}
            </button>
            <a className="button" href={`/dashboards/custom/${slug}?version=draft`}>
              View draft
            </a>
            {message && (
              <span role="status" className={message.tone === "error" ? styles.error : styles.success}>
                {message.text}
              </span>
            )}
          </div>
          <WidgetBuilder view={lastValid} ownTables={ownTables} />
          <div className={styles.codeBox}>
            <CodeMirror
              ref={editor}
              value={text}
              height="62vh"
              extensions={extensions}
              onChange={setText}
              onUpdate={(update) => {
                setUndoSteps(undoDepth(update.state));
                setRedoSteps(redoDepth(update.state));
              }}
              basicSetup={{ foldGutter: true, highlightActiveLine: true }}
            />
          </div>
          {shownProblems === null && result.ok ? (
            <p className={styles.valid} role="status" data-testid="manifest-valid">
              Valid manifest: {result.view.widgets.length} widgets{dirty ? " · unsaved changes" : ""}
            </p>
          ) : (
            <ul className={styles.problems} aria-label="Manifest problems" data-testid="manifest-problems">
              {(shownProblems ?? []).map((e, i) => (
                <li key={i}>
                  <button type="button" onClick={() => jumpTo(e)}>
                    <code>
                      line {e.line}:{e.column}
                    </code>
                    {formatPath(e.path) ? `${formatPath(e.path)}: ` : ""}
                    {e.message}
                  </button>
                </li>
              ))}
            </ul>
          )}
          <RollupStatus dashboardId={dashboardId} revision={rollupsRevision} initial={initialRollups} />
        </section>
        <section className={styles.previewPane} aria-label="Live preview">
          <div className={styles.previewBar}>
            <button type="button" className="button" aria-pressed={arranging} onClick={() => setArranging((on) => !on)} disabled={!result.ok && !arranging} data-testid="arrange-toggle">
              {arranging ? "Done arranging" : "Arrange widgets"}
            </button>
            <span className="visually-hidden" role="status" data-testid="edit-announcement">
              {editAnnouncement}
            </span>
          </div>
          {arranging ? (
            result.ok ? (
              <LayoutMode view={result.view} />
            ) : (
              <p className={styles.notice}>The manifest has problems: fix them in the YAML to go on arranging.</p>
            )
          ) : savedInvalid || lastValid === null ? (
            <p className={styles.notice} data-testid="preview-unavailable">
              The saved draft no longer passes Quarry&apos;s checks (see the problems on the left), so there is nothing to preview. Fix it and save: the
              preview comes back with the first draft that passes.
            </p>
          ) : (
            <>
              {!result.ok && <p className={styles.notice}>The manifest has problems; the preview shows the last valid version.</p>}
              <DashboardView
                key={revision}
                view={lastValid}
                target={{ kind: "dashboard", id: dashboardId, version: "draft" }}
                initialResults={revision === 0 ? initialResults : {}}
                initialFilters={initialFilters}
                timeZone={timeZone}
                clicks={previewClicks ?? undefined}
              />
            </>
          )}
        </section>
      </div>
    </ManifestEditsContext.Provider>
  );
}
