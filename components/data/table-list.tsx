"use client";

import { useState } from "react";
import Link from "next/link";
import { ApiClientError } from "@/components/api-client";
import { formatBytes } from "@/components/documents/format";
import { refusalOf, type DataApi, type DataTable, type TableReaderView } from "./data-api";
import styles from "./data.module.css";
import { formatInstant } from "@/lib/dashboards/format";
import { useOrgTimeZone } from "@/components/org-time-zone";

const READER_KIND: Record<TableReaderView["kind"], string> = { dashboard: "Dashboard", embed: "Embed of", alert_rule: "Alert rule" };

export interface TableListProps {
  api: DataApi;
  tables: readonly DataTable[];
  canManage: boolean;
  onChanged: () => void;
}

/** The organization's tables: columns and types, rows, size, last load, who reads each; admins drop them. */
export function TableList({ api, tables, canManage, onChanged }: TableListProps) {
  const timeZone = useOrgTimeZone();
  const [refused, setRefused] = useState<{ table: string; readers: TableReaderView[]; message: string } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  async function drop(table: DataTable, force: boolean) {
    if (!force && !window.confirm(`Drop the table “${table.name}” and its ${table.row_count.toLocaleString()} rows? This cannot be undone.`)) return;
    setBusy(table.name);
    setMessage(null);
    try {
      await api.drop(table.name, force);
      setRefused(null);
      onChanged();
    } catch (error) {
      if (error instanceof ApiClientError && error.status === 409) setRefused({ table: table.name, ...refusalOf(error.detail, error.message) });
      else setMessage((error as Error).message);
    } finally {
      setBusy(null);
    }
  }

  return (
    <section aria-label="Tables">
      <h2>Tables</h2>
      {message && <div className="error-box" role="alert">{message}</div>}
      {tables.length === 0 ? (
        <p className="empty-state" data-testid="no-tables">
          {canManage ? "No tables yet. Load a file above to make one." : "No tables yet. An admin loads them here."}
        </p>
      ) : (
        <div className={styles.tableWrap}>
          <table className="grid-table" data-testid="data-tables">
            <thead>
              <tr>
                <th>Table</th>
                <th className={styles.number}>Rows</th>
                <th className={`${styles.number} ${styles.wideOnly}`}>Size</th>
                <th className={styles.wideOnly}>Last load</th>
                <th>Read by</th>
                {canManage && <th aria-label="Actions" />}
              </tr>
            </thead>
            <tbody>
              {tables.map((table) => (
                <tr key={table.name} data-testid="data-table-row" data-table={table.name}>
                  <td>
                    <span className={styles.tableName}>{table.name}</span>
                    {table.location_column && (
                      <span className="muted" style={{ fontSize: "0.8rem" }}>
                        {" "}
                        · rows by location ({table.location_column.name})
                      </span>
                    )}
                    <div className={styles.columnsList} aria-label={`Columns of ${table.name}`}>
                      {table.columns.map((c) => (
                        <span key={c.name} className={styles.columnChip}>
                          {c.name}
                          {table.key_columns.includes(c.name) ? " 🔑" : ""} <small>{c.type === "timestamptz" ? "timestamp" : c.type}</small>
                        </span>
                      ))}
                    </div>
                    {refused?.table === table.name && (
                      <div className={`error-box ${styles.refusal}`} role="alert" data-testid="drop-refused">
                        <strong>Not dropped:</strong> {refused.readers.length > 0 ? "these read the table." : refused.message}
                        {refused.readers.length > 0 && (
                          <ul>
                            {refused.readers.map((r) => (
                              <li key={`${r.kind}:${r.id}`}>
                                <ReaderName reader={r} />
                              </li>
                            ))}
                          </ul>
                        )}
                        <div className={styles.actions}>
                          <button type="button" className="button danger" disabled={busy !== null} onClick={() => void drop(table, true)}>
                            Drop anyway
                          </button>
                          <button type="button" className="button" onClick={() => setRefused(null)}>
                            Keep it
                          </button>
                        </div>
                      </div>
                    )}
                  </td>
                  <td className={styles.number}>{table.row_count.toLocaleString()}</td>
                  <td className={`${styles.number} ${styles.wideOnly}`}>{formatBytes(table.bytes)}</td>
                  <td className={styles.wideOnly}>{formatInstant(table.last_load_at, timeZone)}</td>
                  <td>
                    {table.readers.length === 0 ? (
                      <span className="muted">Nothing yet</span>
                    ) : (
                      <ul className={styles.readers}>
                        {table.readers.map((r) => (
                          <li key={`${r.kind}:${r.id}`}>
                            <ReaderName reader={r} />
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                  {canManage && (
                    <td>
                      <div className={styles.rowActions}>
                        <button type="button" className="button danger" disabled={busy !== null} onClick={() => void drop(table, false)} aria-label={`Drop ${table.name}`}>
                          {busy === table.name ? "Dropping…" : "Drop"}
                        </button>
                      </div>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function ReaderName({ reader }: { reader: TableReaderView }) {
  if (reader.kind === "dashboard") return <Link href={`/dashboards/custom/${encodeURIComponent(reader.id)}`}>{reader.name}</Link>;
  return <>{`${READER_KIND[reader.kind]} “${reader.name}”`}</>;
}
