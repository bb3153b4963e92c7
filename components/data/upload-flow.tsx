"use client";

import { useId, useMemo, useRef, useState, type DragEvent } from "react";
import { COLUMN_TYPES, type ColumnType } from "@/lib/data/formats/infer";
import { ApiClientError } from "@/components/api-client";
import { formatBytes } from "@/components/documents/format";
import { LOAD_MODES, MODE_HELP, alignWithTable, columnProblems, loadColumns, planProblem, tableNameFromFile, type LoadModeChoice, type PlannedColumn } from "./column-plan";
import { badRowsOf, type DataApi, type DataTable, type LoadResult, type UploadPreview } from "./data-api";
import styles from "./data.module.css";

/** File name extensions the upload takes, and the format each one is read as. */
export const UPLOAD_EXTENSIONS: Record<string, UploadPreview["format"]> = { csv: "csv", tsv: "csv", txt: "csv", xlsx: "xlsx", parquet: "parquet", ndjson: "ndjson", jsonl: "ndjson" };
const ACCEPT = Object.keys(UPLOAD_EXTENSIONS).map((e) => `.${e}`).join(",");

type Stage =
  | { step: "choose" }
  | { step: "uploading"; file: File; progress: number }
  | { step: "review"; file: File; preview: UploadPreview }
  | { step: "loading"; file: File; preview: UploadPreview }
  | { step: "done"; result: LoadResult };

export interface UploadFlowProps {
  api: DataApi;
  tables: readonly DataTable[];
  maxBytes: number;
  /** Called after a load changed the tables. */
  onLoaded: () => void;
}

function extensionOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

/**
 * Choose a file, upload it with a progress bar, review the first rows with the types inferred over the
 * whole file, rename columns and change types, pick the mode (and key columns, a location column), load.
 */
export function UploadFlow({ api, tables, maxBytes, onLoaded }: UploadFlowProps) {
  const ids = useId();
  const inputRef = useRef<HTMLInputElement>(null);
  const [stage, setStage] = useState<Stage>({ step: "choose" });
  const [error, setError] = useState<string | null>(null);
  const [badRows, setBadRows] = useState<ReturnType<typeof badRowsOf>>([]);
  const [dragging, setDragging] = useState(false);
  const [table, setTable] = useState("");
  const [mode, setMode] = useState<LoadModeChoice>("create");
  const [columns, setColumns] = useState<PlannedColumn[]>([]);
  const [keyColumns, setKeyColumns] = useState<string[]>([]);
  const [location, setLocation] = useState<{ name: string; by: "id" | "code" } | null>(null);
  const [skipBadRows, setSkipBadRows] = useState(false);
  const [addNewColumns, setAddNewColumns] = useState(false);
  const [rereading, setRereading] = useState(false);

  const existing = useMemo(() => tables.find((t) => t.name === table) ?? null, [tables, table]);
  const problems = useMemo(() => columnProblems(columns), [columns]);
  const kept = columns.filter((c) => c.include);
  const problem = stage.step === "review" ? planProblem({ table, mode, columns, keyColumns, existing }) : null;

  function reset() {
    setStage({ step: "choose" });
    setError(null);
    setBadRows([]);
  }

  function applyPreview(file: File, preview: UploadPreview, keepPlan: boolean) {
    setStage({ step: "review", file, preview });
    if (keepPlan) return;
    const name = tableNameFromFile(file.name);
    setTable(name);
    const target = tables.find((t) => t.name === name) ?? null;
    setMode(target ? "append" : "create");
    setColumns(alignWithTable(preview.header.map((header, from) => ({ from, header, name: preview.names[from], type: preview.types[from], include: true })), target));
    setKeyColumns(target?.key_columns ? [...target.key_columns] : []);
    setLocation(null);
  }

  async function choose(file: File) {
    setError(null);
    setBadRows([]);
    const extension = extensionOf(file.name);
    const format = UPLOAD_EXTENSIONS[extension];
    if (!format) return setError(`${extension ? `.${extension}` : "Files without an extension"} cannot be loaded; choose a CSV, TSV, XLSX, Parquet or NDJSON file`);
    if (file.size === 0) return setError("The file is empty");
    if (file.size > maxBytes) return setError(`The file is ${formatBytes(file.size)}; the limit is ${formatBytes(maxBytes)}`);
    setStage({ step: "uploading", file, progress: 0 });
    try {
      const preview = await api.upload(file, { format, ...(extension === "tsv" ? { delimiter: "\t" } : {}) }, (progress) => setStage({ step: "uploading", file, progress }));
      applyPreview(file, preview, false);
    } catch (failure) {
      setStage({ step: "choose" });
      setError((failure as Error).message);
    }
  }

  /** Reads the uploaded file again with another sheet, delimiter or encoding: new header, rows and types. */
  async function reread(change: { sheet?: string; delimiter?: string; encoding?: string }) {
    if (stage.step !== "review") return;
    setRereading(true);
    setError(null);
    try {
      const preview = await api.preview(stage.preview.id, {
        sheet: change.sheet ?? stage.preview.sheet ?? undefined,
        delimiter: change.delimiter ?? stage.preview.delimiter ?? undefined,
        encoding: change.encoding ?? stage.preview.encoding ?? undefined,
      });
      applyPreview(stage.file, preview, false);
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setRereading(false);
    }
  }

  async function load() {
    if (stage.step !== "review" || problem) return;
    setStage({ step: "loading", file: stage.file, preview: stage.preview });
    setError(null);
    setBadRows([]);
    try {
      const result = await api.load({
        upload_id: stage.preview.id,
        table,
        mode,
        columns: loadColumns(columns),
        ...(mode === "upsert" ? { key_columns: keyColumns } : {}),
        ...(location ? { location_column: location } : {}),
        on_bad_row: skipBadRows ? "skip" : "fail",
        ...(mode === "append" || mode === "upsert" ? { add_new_columns: addNewColumns } : {}),
        // The file is read for the load as it was for the preview.
        ...(stage.preview.sheet ? { sheet: stage.preview.sheet } : {}),
        ...(stage.preview.delimiter ? { delimiter: stage.preview.delimiter } : {}),
        ...(stage.preview.encoding ? { encoding: stage.preview.encoding } : {}),
      });
      setStage({ step: "done", result });
      onLoaded();
    } catch (failure) {
      setStage({ step: "review", file: stage.file, preview: stage.preview });
      setError((failure as Error).message);
      if (failure instanceof ApiClientError) setBadRows(badRowsOf(failure.detail));
    }
  }

  const editColumn = (index: number, change: Partial<PlannedColumn>) => setColumns((current) => current.map((c, i) => (i === index ? { ...c, ...change } : c)));

  function onDrop(event: DragEvent<HTMLDivElement>) {
    event.preventDefault();
    setDragging(false);
    const file = event.dataTransfer.files[0];
    if (file) void choose(file);
  }

  const busy = stage.step === "uploading" || stage.step === "loading" || rereading;

  return (
    <section aria-label="Load a file into a table" className="card">
      <h2 style={{ marginTop: 0 }}>Load a file</h2>
      {(stage.step === "choose" || stage.step === "done") && (
        <div
          className={`${styles.dropzone} ${dragging ? styles.dragging : ""}`}
          data-testid="data-dropzone"
          onDragOver={(event) => {
            event.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={onDrop}
        >
          <p>
            Drop a file here or{" "}
            <button type="button" className="link-button" onClick={() => inputRef.current?.click()}>
              choose a file
            </button>
          </p>
          <p className="muted">CSV or TSV (any delimiter, a header row), Excel (.xlsx), Parquet or NDJSON · up to {formatBytes(maxBytes)}</p>
          <input
            ref={inputRef}
            type="file"
            hidden
            accept={ACCEPT}
            data-testid="data-file-input"
            onChange={(event) => {
              const file = event.target.files?.[0];
              if (file) void choose(file);
              event.target.value = "";
            }}
          />
        </div>
      )}

      {stage.step === "done" && (
        <div className={styles.report} role="status" data-testid="load-report">
          <strong>
            Loaded {stage.result.rows_loaded.toLocaleString()} row{stage.result.rows_loaded === 1 ? "" : "s"} into {stage.result.table}
          </strong>{" "}
          ({stage.result.mode}; the table now holds {stage.result.row_count.toLocaleString()} rows
          {stage.result.columns_added.length > 0 ? `; new columns: ${stage.result.columns_added.join(", ")}` : ""}).
          {stage.result.rows_skipped > 0 && (
            <>
              <p style={{ margin: "0.4rem 0 0" }}>{stage.result.rows_skipped.toLocaleString()} rows were skipped:</p>
              <BadRowList rows={stage.result.bad_rows} />
            </>
          )}
        </div>
      )}

      {stage.step === "uploading" && (
        <div className={styles.fileLine}>
          <span className={styles.fileName}>{stage.file.name}</span>
          <span className="muted">{formatBytes(stage.file.size)}</span>
          <progress className={styles.progress} max={1} value={stage.progress} aria-label={`Upload progress of ${stage.file.name}`} data-testid="upload-progress">
            {Math.round(stage.progress * 100)}%
          </progress>
          <span className={styles.progressText}>{stage.progress < 1 ? `${Math.round(stage.progress * 100)}%` : "Reading the file…"}</span>
        </div>
      )}

      {error && (
        <div className="error-box" role="alert" data-testid="data-error" style={{ marginTop: "0.75rem" }}>
          {badRows.length > 0 ? "Nothing was loaded: a row does not fit its column." : error}
          {badRows.length > 0 && <BadRowList rows={badRows} />}
        </div>
      )}

      {(stage.step === "review" || stage.step === "loading") && (
        <div className={styles.steps} data-testid="upload-review">
          <div className={styles.fileLine}>
            <span className={styles.fileName}>{stage.file.name}</span>
            <span className="muted">
              {formatBytes(stage.preview.bytes)} · {stage.preview.row_count.toLocaleString()} rows · {stage.preview.header.length} columns · types inferred from every row
            </span>
            <button type="button" className="button" onClick={reset} disabled={busy}>
              Choose another file
            </button>
          </div>

          {(stage.preview.sheets || stage.preview.format === "csv") && (
            <div className={styles.options}>
              {stage.preview.sheets && (
                <label className={styles.field}>
                  <span>Sheet</span>
                  <select value={stage.preview.sheet ?? ""} disabled={busy} onChange={(e) => void reread({ sheet: e.target.value })} data-testid="sheet-select">
                    {stage.preview.sheets.map((sheet) => (
                      <option key={sheet} value={sheet}>{sheet}</option>
                    ))}
                  </select>
                </label>
              )}
              {stage.preview.format === "csv" && (
                <>
                  <label className={styles.field}>
                    <span>Delimiter</span>
                    <select value={stage.preview.delimiter ?? ","} disabled={busy} onChange={(e) => void reread({ delimiter: e.target.value })}>
                      {[[",", "Comma"], [";", "Semicolon"], ["\t", "Tab"], ["|", "Pipe"]].map(([value, label]) => (
                        <option key={label} value={value}>{label}</option>
                      ))}
                    </select>
                  </label>
                  <label className={styles.field}>
                    <span>Encoding</span>
                    <select value={stage.preview.encoding ?? "utf-8"} disabled={busy} onChange={(e) => void reread({ encoding: e.target.value })}>
                      {["utf-8", "windows-1252", "iso-8859-1", "utf-16le", "shift_jis"].map((encoding) => (
                        <option key={encoding} value={encoding}>{encoding}</option>
                      ))}
                    </select>
                  </label>
                </>
              )}
            </div>
          )}

          <div className={styles.options}>
            <label className={styles.field}>
              <span>Table</span>
              <input
                type="text"
                value={table}
                list={`${ids}-tables`}
                onChange={(e) => {
                  const name = e.target.value.trim();
                  setTable(name);
                  const target = tables.find((t) => t.name === name) ?? null;
                  if (target) {
                    setColumns((current) => alignWithTable(current, target));
                    if (mode === "create") setMode("append");
                  } else if (mode !== "create") setMode("create");
                }}
                aria-describedby={`${ids}-table-hint`}
                data-testid="table-name"
                spellCheck={false}
                autoCapitalize="off"
              />
              <datalist id={`${ids}-tables`}>
                {tables.map((t) => (
                  <option key={t.name} value={t.name} />
                ))}
              </datalist>
            </label>
            <label className={styles.field}>
              <span>Mode</span>
              <select value={mode} onChange={(e) => setMode(e.target.value as LoadModeChoice)} data-testid="load-mode">
                {LOAD_MODES.map((m) => (
                  <option key={m} value={m} disabled={(m === "create") === (existing !== null)}>
                    {m}
                  </option>
                ))}
              </select>
            </label>
            <label className={styles.field}>
              <span>Location column</span>
              <select
                value={location ? `${location.by}:${location.name}` : ""}
                onChange={(e) => {
                  const [by, ...name] = e.target.value.split(":");
                  setLocation(e.target.value ? { by: by as "id" | "code", name: name.join(":") } : null);
                }}
                data-testid="location-column"
              >
                <option value="">None: every member sees every row</option>
                {kept.flatMap((c) => [
                  <option key={`code:${c.name}`} value={`code:${c.name}`}>{c.name} (location code)</option>,
                  <option key={`id:${c.name}`} value={`id:${c.name}`}>{c.name} (location id)</option>,
                ])}
              </select>
            </label>
          </div>
          <p className={styles.hint} id={`${ids}-table-hint`}>
            {MODE_HELP[mode]} {location ? "Members limited to some locations see only their locations' rows." : ""}
          </p>

          {mode === "upsert" && (
            <fieldset className={styles.keys}>
              <legend>Key columns (a row with the same values is updated)</legend>
              {kept.map((c) => (
                <label key={c.from}>
                  <input
                    type="checkbox"
                    checked={keyColumns.includes(c.name)}
                    onChange={(e) => setKeyColumns((current) => (e.target.checked ? [...current, c.name] : current.filter((k) => k !== c.name)))}
                  />
                  {c.name}
                </label>
              ))}
            </fieldset>
          )}

          <div className={styles.previewWrap}>
            <table className={styles.preview} data-testid="upload-preview">
              <caption className="muted" style={{ textAlign: "left", padding: "0.35rem 0.5rem" }}>
                The first {stage.preview.rows.length} of {stage.preview.row_count.toLocaleString()} rows. Rename a column or change its type in its header.
              </caption>
              <thead>
                <tr>
                  {columns.map((c, index) => (
                    <th key={c.from} scope="col" className={c.include ? "" : styles.excluded} data-testid="preview-column">
                      <div className={styles.columnHead}>
                        <input
                          type="text"
                          value={c.name}
                          aria-label={`Name of column ${index + 1} (${c.header})`}
                          aria-invalid={problems.has(index)}
                          onChange={(e) => editColumn(index, { name: e.target.value.trim() })}
                          disabled={!c.include}
                          spellCheck={false}
                          autoCapitalize="off"
                        />
                        <select value={c.type} aria-label={`Type of column ${c.name}`} onChange={(e) => editColumn(index, { type: e.target.value as ColumnType })} disabled={!c.include}>
                          {COLUMN_TYPES.map((type) => (
                            <option key={type} value={type}>
                              {type === "timestamptz" ? "timestamp with time zone" : type}
                              {type === stage.preview.types[c.from] ? " (inferred)" : ""}
                            </option>
                          ))}
                        </select>
                        <label>
                          <input type="checkbox" checked={c.include} onChange={(e) => editColumn(index, { include: e.target.checked })} /> Load this column
                        </label>
                        {c.header !== c.name && <span className={styles.sourceName}>from “{c.header}”</span>}
                        {problems.has(index) && <span className={styles.columnProblem}>{problems.get(index)}</span>}
                      </div>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {stage.preview.rows.map((row, r) => (
                  <tr key={r}>
                    {columns.map((c) => (
                      <td key={c.from} className={`${row[c.from] === null ? styles.null : ""} ${c.include ? "" : styles.excluded}`}>
                        {row[c.from] ?? "empty"}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>

          <div className={styles.options}>
            <label className={styles.keys}>
              <input type="checkbox" checked={skipBadRows} onChange={(e) => setSkipBadRows(e.target.checked)} /> Skip rows that do not fit their column (and list them) instead of loading nothing
            </label>
            {(mode === "append" || mode === "upsert") && existing && (
              <label className={styles.keys}>
                <input type="checkbox" checked={addNewColumns} onChange={(e) => setAddNewColumns(e.target.checked)} /> Add columns the table does not have yet
              </label>
            )}
          </div>

          <div className={styles.actions}>
            <button type="button" className="button primary" onClick={() => void load()} disabled={busy || problem !== null} data-testid="load-button">
              {stage.step === "loading" ? "Loading…" : `Load ${stage.preview.row_count.toLocaleString()} rows into ${table || "…"}`}
            </button>
            {problem && (
              <span className="muted" role="status" data-testid="plan-problem">
                {problem}
              </span>
            )}
          </div>
        </div>
      )}
    </section>
  );
}

function BadRowList({ rows }: { rows: ReturnType<typeof badRowsOf> }) {
  return (
    <ul className={styles.badRows} data-testid="bad-rows">
      {rows.map((bad, i) => (
        <li key={i}>
          Row {bad.row}, column <strong>{bad.column}</strong>
          {bad.value !== undefined && (
            <>
              , value <code>{bad.value === null ? "empty" : JSON.stringify(bad.value)}</code>
            </>
          )}
          : {bad.message.replace(/^Row \d+, column "[^"]*": /, "")}
        </li>
      ))}
    </ul>
  );
}
