import Link from "next/link";
import type { AlertView } from "@/lib/alerts/contract";
import { cronInWords, humanize } from "@/lib/dashboards/format";
import styles from "./alerts.module.css";

/** The worst state among an alert's scopes: firing if any fires. */
function overall(alert: AlertView): "firing" | "resolved" | "ok" | "not evaluated" {
  if (alert.states.length === 0) return "not evaluated";
  if (alert.states.some((s) => s.state === "firing")) return "firing";
  return alert.states.some((s) => s.state === "resolved") ? "resolved" : "ok";
}

/** The alerts the caller may see, as a table: name (to the alert's page), what it watches, its condition, cadence and state. */
export function AlertsList({ alerts, timeZone }: { alerts: readonly AlertView[]; timeZone: string }) {
  if (alerts.length === 0) {
    return (
      <p className="muted" data-testid="alerts-empty">
        No alerts yet. Open a dashboard and choose &quot;Alert me&quot; on a KPI tile, a chart or a table.
      </p>
    );
  }
  return (
    <table className={styles.table} data-testid="alerts-list">
      <thead>
        <tr>
          <th scope="col">Alert</th>
          <th scope="col">Dashboard</th>
          <th scope="col">When the value is</th>
          <th scope="col">Checked</th>
          <th scope="col">State</th>
        </tr>
      </thead>
      <tbody>
        {alerts.map((a) => {
          const state = overall(a);
          const snoozed = a.snoozed_until !== null && new Date(a.snoozed_until) > new Date();
          return (
            <tr key={a.id}>
              <td>
                <Link href={`/alerts/${encodeURIComponent(a.id)}`}>{a.name}</Link>
              </td>
              <td>
                <Link href={`/dashboards/custom/${encodeURIComponent(a.dashboard_slug)}`}>{a.dashboard_name}</Link>
                <span className={styles.hint}> · {a.column ? humanize(a.column) : (a.widget_name ?? "a removed widget")}</span>
              </td>
              <td>{a.condition_text}</td>
              <td>{a.cadence.kind === "cron" ? <span title={a.cadence.cron}>{cronInWords(a.cadence.cron, timeZone)}</span> : "when the data changes"}</td>
              <td>
                <span className={styles.state} data-state={state}>
                  {state}
                </span>
                {a.muted && <span className={styles.hint}> · muted</span>}
                {snoozed && <span className={styles.hint}> · snoozed</span>}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
