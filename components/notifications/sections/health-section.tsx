"use client";

import type { deliveryHealth } from "@/lib/notifications/contract";
import type { ResponseOf } from "@/components/api-client";
import { channelLabel } from "@/lib/notifications/channel-kinds";
import { useWhen } from "../api";
import { HealthChart } from "../health-chart";
import styles from "../notifications.module.css";
import { RuleName, StatusChip, Table } from "./parts";

export function HealthSection({ health, hours }: { health: ResponseOf<typeof deliveryHealth>; hours: number }) {
  const when = useWhen();
  return (
    <section className={styles.section} aria-labelledby="health-h">
      <h2 id="health-h">Delivery health <span className="muted">· last {hours} hours</span></h2>
      <div className={styles.rates}>
        {health.channels.map((c) => (
          <div key={c.channel} className={styles.rate} data-channel={c.channel}>
            <div className={styles.rateKind}>{channelLabel(c.channel)}</div>
            <div className={styles.rateValue}>{c.success_rate === null ? "—" : `${Math.round(c.success_rate * 100)}%`}</div>
            <div className="muted">{c.delivered} delivered · {c.dead} dead · {c.skipped} skipped{c.in_flight > 0 ? ` · ${c.in_flight} in flight` : ""}</div>
          </div>
        ))}
      </div>
      <HealthChart series={health.series} from={health.from} to={health.to} />
      {/* With no deliveries the chart's own empty state says it all; a second one under it would only repeat it. */}
      {health.recent.length > 0 && (
        <>
          <h3>Recent deliveries</h3>
          <Table aria-label="Recent deliveries">
            <thead><tr><th>When</th><th>Rule</th><th>Channel</th><th>Recipient</th><th>Status</th><th>Why</th></tr></thead>
            <tbody>
              {health.recent.map((d) => (
                <tr key={d.id}>
                  <td className={styles.nowrap}>{when(d.created_at)}</td>
                  <td><RuleName ruleKey={d.rule_key} /></td>
                  <td>{channelLabel(d.channel)}</td>
                  <td>{d.recipient}</td>
                  <td className={styles.nowrap}><StatusChip status={d.status} /></td>
                  <td>
                    {d.reason}
                    {d.last_error && (
                      // After a success the last error is history (an earlier attempt, or before a requeue), not an alarm.
                      <div className={`${styles.mono} ${d.status === "delivered" ? "muted" : styles.failed}`}>{d.status === "delivered" ? `earlier: ${d.last_error}` : d.last_error}</div>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        </>
      )}
    </section>
  );
}
