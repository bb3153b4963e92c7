"use client";

import { useRef, useState, type DragEvent, type ReactNode } from "react";
import type { z } from "zod";
import type { DocumentList, DocumentRecord, DocumentStatus, UploadConstraints } from "@/lib/documents/contract";
import { useDocuments, useEmbeddingConfig } from "@/components/api-hooks";
import { PageNote } from "@/components/page-note";
import { formatBytes } from "./format";
import { fetchRecord, removeIndex, startIndexing, type EmbeddingView } from "./index-api";
import { IndexState } from "./index-state";
import { createRecord, deleteRecord, precheckFile, requestDownloadUrl, sendFile } from "./upload-file";
import styles from "./documents.module.css";
import { formatInstant } from "@/lib/dashboards/format";
import { useOrgTimeZone } from "@/components/org-time-zone";

type List = z.infer<typeof DocumentList>;
type Constraints = z.infer<typeof UploadConstraints>;

interface UploadItem {
  key: string;
  name: string;
  size: number;
  progress: number;
  state: "queued" | "uploading" | "done" | "error";
  error?: string;
}

/** Files sent at the same time; more only compete for the same upload bandwidth. */
const PARALLEL_UPLOADS = 2;

const STATUS_TONE: Record<DocumentStatus, string> = { created: "", uploaded: "good", indexing: "warn", indexed: "good", failed: "bad" };

export interface DocumentsClientProps {
  initial: List;
  constraints: Constraints;
  /** Admins upload and delete; everyone else reads. */
  canManage: boolean;
  pageSize: number;
  /** Where the document search panel (issue 7) renders. */
  searchPanel?: ReactNode;
  /** The active embedding model: indexes made with another one are shown as stale. */
  embedding: EmbeddingView;
}

export function DocumentsClient({ initial, constraints, canManage, pageSize, searchPanel, embedding: initialEmbedding }: DocumentsClientProps) {
  const timeZone = useOrgTimeZone();
  const [query, setQuery] = useState("");
  const [status, setStatus] = useState<"" | DocumentStatus>("");
  // The list follows indexing and other admins' uploads by polling (faster while anything indexes, see useDocuments).
  const unfiltered = query.trim() === "" && status === "";
  const documents = useDocuments({ q: query, status, limit: pageSize }, unfiltered ? initial : undefined);
  const list: List = documents.data ?? initial;
  const embedding = useEmbeddingConfig(initialEmbedding).data ?? initialEmbedding;
  const [uploads, setUploads] = useState<UploadItem[]>([]);
  const [dragging, setDragging] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  /** Documents this tab is indexing or un-indexing, and the last index error per document. */
  const [busyIds, setBusyIds] = useState<ReadonlySet<string>>(new Set());
  const [indexErrors, setIndexErrors] = useState<Record<string, string>>({});
  const inputRef = useRef<HTMLInputElement>(null);

  const refresh = () => documents.mutate();
  /** Changes the cached list at once (a record the server just answered), without a request. */
  const editList = (change: (current: List) => List) => documents.mutate((current) => change(current ?? list), { revalidate: false });

  const update = (key: string, change: Partial<UploadItem>) => setUploads((items) => items.map((u) => (u.key === key ? { ...u, ...change } : u)));

  async function uploadOne(item: UploadItem, file: File) {
    update(item.key, { state: "uploading" });
    let created: DocumentRecord | null = null;
    try {
      created = await createRecord(file);
      await sendFile(created.id, file, (progress) => update(item.key, { progress }));
      update(item.key, { state: "done", progress: 1 });
    } catch (error) {
      update(item.key, { state: "error", error: (error as Error).message });
      // A record whose file never arrived is only clutter; the user retries by dropping the file again.
      if (created) await deleteRecord(created.id).catch(() => undefined);
    }
    await refresh();
  }

  async function addFiles(files: File[]) {
    const accepted: [UploadItem, File][] = [];
    const items = files.map((file, index) => {
      const problem = precheckFile(file, constraints);
      const item: UploadItem = { key: `${Date.now()}-${index}-${file.name}`, name: file.name, size: file.size, progress: 0, state: problem ? "error" : "queued", error: problem ?? undefined };
      if (!problem) accepted.push([item, file]);
      return item;
    });
    setUploads((current) => [...items, ...current.filter((u) => u.state !== "done")]);
    const queue = [...accepted];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await uploadOne(...next);
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_UPLOADS, queue.length) }, worker));
  }

  function onDrop(event: DragEvent<HTMLDivElement>) {
    event.preventDefault();
    setDragging(false);
    void addFiles(Array.from(event.dataTransfer.files));
  }

  async function download(doc: DocumentRecord) {
    setMessage(null);
    try {
      const url = await requestDownloadUrl(doc.id);
      const link = document.createElement("a");
      link.href = url;
      link.download = doc.filename;
      link.rel = "noopener";
      document.body.appendChild(link);
      link.click();
      link.remove();
    } catch (error) {
      setMessage((error as Error).message);
    }
  }

  const replaceRow = (record: DocumentRecord) => editList((current) => ({ ...current, items: current.items.map((d) => (d.id === record.id ? record : d)) }));
  const setBusy = (id: string, busy: boolean) =>
    setBusyIds((current) => {
      const next = new Set(current);
      if (busy) next.add(id);
      else next.delete(id);
      return next;
    });
  const setIndexError = (id: string, error: string | null) =>
    setIndexErrors((current) => {
      const { [id]: _previous, ...rest } = current;
      return error ? { ...rest, [id]: error } : rest;
    });

  async function index(doc: DocumentRecord) {
    setBusy(doc.id, true);
    setIndexError(doc.id, null);
    // The POST queues the job and answers at once (202); the list then follows the job's state and
    // progress (it polls faster while a document is queued or indexing).
    try {
      const record = await startIndexing(doc.id);
      if (record) await replaceRow(record);
    } catch (error) {
      setIndexError(doc.id, (error as Error).message);
      const record = await fetchRecord(doc.id).catch(() => null);
      if (record) await replaceRow(record);
    } finally {
      setBusy(doc.id, false);
    }
  }

  async function unindex(doc: DocumentRecord) {
    if (!window.confirm(`Remove the search index of “${doc.title}”? The file stays; search stops finding it until it is indexed again.`)) return;
    setBusy(doc.id, true);
    setIndexError(doc.id, null);
    try {
      await removeIndex(doc.id);
      const record = await fetchRecord(doc.id);
      if (record) replaceRow(record);
    } catch (error) {
      setIndexError(doc.id, (error as Error).message);
    } finally {
      setBusy(doc.id, false);
    }
  }

  async function remove(doc: DocumentRecord) {
    if (!window.confirm(`Delete “${doc.title}”? Its file and search index are removed too.`)) return;
    setMessage(null);
    try {
      await deleteRecord(doc.id);
      await editList((current) => ({ ...current, items: current.items.filter((d) => d.id !== doc.id), total: current.total - 1 }));
    } catch (error) {
      setMessage((error as Error).message);
    }
  }

  return (
    <div className={styles.layout}>
      {canManage && (
        <section aria-label="Upload documents" className="card">
          <div
            className={`${styles.dropzone} ${dragging ? styles.dragging : ""}`}
            data-testid="document-dropzone"
            onDragOver={(event) => {
              event.preventDefault();
              setDragging(true);
            }}
            onDragLeave={() => setDragging(false)}
            onDrop={onDrop}
          >
            <p>
              Drop files here or{" "}
              <button type="button" className="link-button" onClick={() => inputRef.current?.click()}>
                choose files
              </button>
            </p>
            <p className="muted">
              {constraints.types.map((t) => t.label).join(", ")} · up to {formatBytes(constraints.max_bytes)} each
            </p>
            <input
              ref={inputRef}
              type="file"
              multiple
              hidden
              accept={constraints.accept}
              data-testid="document-file-input"
              onChange={(event) => {
                void addFiles(Array.from(event.target.files ?? []));
                event.target.value = "";
              }}
            />
          </div>
          {uploads.length > 0 && (
            <ul className={styles.uploads} aria-label="Uploads">
              {uploads.map((u) => (
                <li key={u.key} className={styles.upload} data-testid="upload-item" data-state={u.state}>
                  <span className={styles.uploadName}>{u.name}</span>
                  <span className="muted">{formatBytes(u.size)}</span>
                  {u.state === "error" ? (
                    <span className={styles.uploadError} role="alert">{u.error}</span>
                  ) : (
                    <progress className={styles.progress} max={1} value={u.progress} aria-label={`Upload progress of ${u.name}`}>
                      {Math.round(u.progress * 100)}%
                    </progress>
                  )}
                  <span className={styles.uploadState}>{u.state === "uploading" ? `${Math.round(u.progress * 100)}%` : u.state === "done" ? "Done" : u.state === "queued" ? "Waiting" : ""}</span>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}

      {searchPanel}

      <section aria-label="Documents">
        <div className={styles.toolbar}>
          <input type="search" placeholder="Filter by title or file name" value={query} onChange={(e) => setQuery(e.target.value)} aria-label="Filter documents" />
          <select value={status} onChange={(e) => setStatus(e.target.value as "" | DocumentStatus)} aria-label="Status">
            <option value="">Any status</option>
            {(["created", "uploaded", "indexing", "indexed", "failed"] as const).map((s) => (
              <option key={s} value={s}>{s}</option>
            ))}
          </select>
          <span className="muted">{list.total} document{list.total === 1 ? "" : "s"}</span>
        </div>
        {message && <div className="error-box" role="alert">{message}</div>}
        {list.items.length === 0 ? (
          <p className="empty-state">{canManage ? "No documents yet. Drop a file above to add one." : "No documents yet."}</p>
        ) : (
          <div className={styles.tableWrap}>
            <table className="grid-table" data-testid="documents-table">
              <thead>
                <tr><th>Title</th><th className={styles.wideOnly}>File</th><th className={styles.wideOnly}>Size</th><th>Status</th><th className={styles.wideOnly}>Uploaded</th><th aria-label="Actions" /></tr>
              </thead>
              <tbody>
                {list.items.map((doc) => (
                  <tr key={doc.id} data-testid="document-row" data-document-id={doc.id} data-filename={doc.filename} data-status={doc.status}>
                    <td>
                      <strong>{doc.title}</strong>
                      {doc.tags.length > 0 && <div className={styles.tags}>{doc.tags.map((t) => <span key={t} className={styles.tag}>{t}</span>)}</div>}
                    </td>
                    <td className={`${styles.filename} ${styles.wideOnly}`}>{doc.filename}</td>
                    <td className={styles.wideOnly}>{formatBytes(doc.size_bytes)}</td>
                    <td className={styles.statusCell}>
                      <span className={`chip ${STATUS_TONE[doc.status]}`} data-testid="status-chip">{doc.status}</span>
                      <IndexState doc={doc} activeModel={embedding.model} error={indexErrors[doc.id] ?? null} />
                    </td>
                    <td className={styles.wideOnly}>{formatInstant(doc.uploaded_at, timeZone)}</td>
                    <td>
                      <div className={styles.actions}>
                        <button type="button" className="button" disabled={!doc.checksum_sha256} onClick={() => void download(doc)}>Download</button>
                        {canManage && (
                          <>
                            <button
                              type="button"
                              className="button"
                              disabled={!doc.checksum_sha256 || doc.status === "indexing" || doc.index_job?.state === "queued" || busyIds.has(doc.id) || !embedding.configured}
                              title={!embedding.configured ? "The embedding provider is not configured" : !doc.checksum_sha256 ? "Upload a file first" : undefined}
                              onClick={() => void index(doc)}
                            >
                              {doc.index_job?.state === "failed" ? "Retry" : doc.chunk_count > 0 || doc.index_model ? "Re-index" : "Index"}
                            </button>
                            {(doc.chunk_count > 0 || doc.index_model) && (
                              <button type="button" className="button" disabled={doc.status === "indexing" || busyIds.has(doc.id)} onClick={() => void unindex(doc)}>
                                Remove index
                              </button>
                            )}
                            <button type="button" className="button danger" onClick={() => void remove(doc)}>Delete</button>
                          </>
                        )}
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <PageNote page={list} what="documents" />
      </section>
    </div>
  );
}
