"use client";

import { useEffect, useRef } from "react";
import { getDashboardRollups, type DashboardRollup, type DashboardRollups } from "@/lib/dashboards/contract";
import { useApiRead } from "@/components/api-hooks";
import styles from "./dashboards.module.css";

const STATE: Record<DashboardRollup["state"], { label: string; tone: string }> = {
  ready: { label: "ready", tone: "chip good" },
  building: { label: "building", tone: "chip warn" },
  failed: { label: "failed", tone: "chip bad" },
  // A draft's rollups are declared, and built, when it is published (docs/rollups.md).
  not_built: { label: "built on publish", tone: "chip" },
};

/**
 * Under the manifest in the editor: the saved draft's rollups, each with its build state and the
 * widgets it answers under the default filters. The server decides the widgets with the query
 * engine's own routing (GET …/rollups), so this agrees with each widget's source in the preview.
 * `initial` is the editor page's first read (in the first paint); `revision` changes after a save or a
 * publish, which reads the list again.
 */
export function RollupStatus({ dashboardId, revision, initial = null }: { dashboardId: string; revision: number; initial?: DashboardRollups | null }) {
  const status = useApiRead(getDashboardRollups, { params: { id: dashboardId } }, { revalidateOnFocus: true, fallbackData: initial ?? undefined });
  const { mutate } = status;
  // A save or publish changes what the draft declares and builds: read again.
  const first = useRef(revision);
  useEffect(() => {
    if (revision !== first.current) void mutate();
  }, [revision, mutate]);
  if (status.error) return status.error.status === 422 ? null : <p role="alert">Rollups: {status.error.message}</p>;
  if (!status.data || status.data.rollups.length === 0) return null;
  return (
    <section className={styles.rollups} aria-label="Rollups" data-testid="rollup-status">
      <h2>Rollups</h2>
      <table className="grid-table">
        <thead>
          <tr>
            <th scope="col">Rollup</th>
            <th scope="col">State</th>
            <th scope="col">Answers (default filters)</th>
          </tr>
        </thead>
        <tbody>
          {status.data.rollups.map((r) => (
            <tr key={`${r.dataset}/${r.name}`} data-testid={`rollup-${r.name}`}>
              <td>
                <code>{r.name}</code>
                <div className="muted">{r.dataset}</div>
              </td>
              <td>
                <span className={STATE[r.state].tone}>{STATE[r.state].label}</span>
                {r.error && <div className={styles.error}>{r.error}</div>}
              </td>
              <td>{r.widgets.length === 0 ? <span className="muted">{r.state === "ready" ? "no widget" : "none until built: the tables answer"}</span> : r.widgets.map((w) => w.title).join(", ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {status.data.base_widgets.length > 0 && <p className="muted">From the tables: {status.data.base_widgets.map((w) => w.title).join(", ")}</p>}
    </section>
  );
}
