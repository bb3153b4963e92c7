"use client";

import type { listDemoOutbox } from "@/lib/notifications/contract";
import type { ResponseOf } from "@/components/api-client";
import { channelLabel } from "@/lib/notifications/channel-kinds";
import { picturesIn } from "@/lib/notifications/transports/picture-line";
import { useWhen } from "../api";
import styles from "../notifications.module.css";
import { RuleName, Table } from "./parts";

/** The demo's e-mail and Slack outbox (the first page, newest first). */
export function OutboxSection({ outbox }: { outbox: ResponseOf<typeof listDemoOutbox> }) {
  const when = useWhen();
  return (
    <section className={styles.section} aria-labelledby="outbox-h">
      <h2 id="outbox-h">Demo outbox ({outbox.total})</h2>
      <p className="muted">
        The demo&apos;s e-mail and Slack: with the demo data, their messages are kept here instead of sent, so rules, e-mail groups and
        subscriptions work offline. Nothing leaves Quarry. Configure an SMTP server or Slack under Channels to send for real.
      </p>
      {outbox.items.length === 0 ? (
        <p className="empty-state">Nothing yet. Run a rule with the Email or Slack channel, or an e-mail group.</p>
      ) : (
        <Table aria-label="Demo outbox">
          <thead><tr><th>Delivered</th><th>Channel</th><th>To</th><th>Rule</th><th>Message</th></tr></thead>
          <tbody>
            {outbox.items.map((m) => (
              <tr key={m.id}>
                <td className={styles.nowrap}>{when(m.delivered_at ?? m.created_at)}</td>
                <td>{channelLabel(m.channel)}</td>
                <td>{m.recipient}</td>
                <td><RuleName ruleKey={m.rule_key} /></td>
                <td>
                  <strong>{m.subject}</strong>
                  <div className={`${styles.mono} ${styles.mailBody}`}>{m.body}</div>
                  {picturesIn(m.body).map((p) => (
                    // eslint-disable-next-line @next/next/no-img-element -- a signed PNG drawn on request, not a static asset Next could optimise
                    <img key={p.url} src={p.url} alt={p.alt} className={styles.outboxPicture} loading="lazy" data-testid="outbox-picture" />
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </section>
  );
}
