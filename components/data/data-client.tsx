"use client";

import { useCallback, useState } from "react";
import { browserDataApi } from "./browser-data-api";
import type { DataTable } from "./data-api";
import { TableList } from "./table-list";
import { UploadFlow } from "./upload-flow";
import styles from "./data.module.css";

export interface DataClientProps {
  initial: DataTable[];
  /** Admins load and drop; every other member reads the list. */
  canManage: boolean;
  /** The largest file an upload takes. */
  maxBytes: number;
}

export function DataClient({ initial, canManage, maxBytes }: DataClientProps) {
  const [tables, setTables] = useState<DataTable[]>(initial);
  const [stale, setStale] = useState<string | null>(null);
  const refresh = useCallback(async () => {
    try {
      setTables(await browserDataApi.list());
      setStale(null);
    } catch (error) {
      setStale(`The list could not be refreshed: ${(error as Error).message}`);
    }
  }, []);
  return (
    <div className={styles.layout}>
      {canManage && <UploadFlow api={browserDataApi} tables={tables} maxBytes={maxBytes} onLoaded={() => void refresh()} />}
      {stale && <div className="error-box" role="alert">{stale}</div>}
      <TableList api={browserDataApi} tables={tables} canManage={canManage} onChanged={() => void refresh()} />
    </div>
  );
}
