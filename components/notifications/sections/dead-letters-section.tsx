"use client";

import { requeueDeadLetter, type listDeadLetters } from "@/lib/notifications/contract";
import { callApi, type ResponseOf } from "@/components/api-client";
import { PageNote } from "@/components/page-note";
import { channelLabel } from "@/lib/notifications/channel-kinds";
import { useWhen } from "../api";
import styles from "../notifications.module.css";
import { Result, RuleName, Table, useActions } from "./parts";

export function DeadLettersSection({ deadLetterPage, refresh }: { deadLetterPage: ResponseOf<typeof listDeadLetters>; refresh: () => void }) {
  const when = useWhen();
  const { items: deadLetters, total } = deadLetterPage;
  const { flash, act } = useActions(refresh);
  return (
    <section className={styles.section} aria-labelledby="dead-h">
      <h2 id="dead-h">Dead letters ({total})</h2>
      {deadLetters.length === 0 ? (
        <p className="empty-state">Nothing failed permanently.</p>
      ) : (
        <>
          <Table>
            <thead><tr><th>Created</th><th>Rule</th><th>Channel</th><th>Recipient</th><th>Attempts</th><th>Last error</th><th /></tr></thead>
            <tbody>
              {deadLetters.map((d) => (
                <tr key={d.id}>
                  <td className={styles.nowrap}>{when(d.created_at)}</td>
                  <td><RuleName ruleKey={d.rule_key} /></td>
                  <td>{channelLabel(d.channel)}</td>
                  <td>{d.recipient}</td>
                  <td>{d.attempts}/{d.max_attempts}</td>
                  <td className={styles.mono}>{d.last_error ?? d.reason}</td>
                  <td>
                    <button className="button" type="button" onClick={() => void act(`dead:${d.id}`, () => callApi(requeueDeadLetter, { params: { id: d.id } }), "Requeued for a fresh round of attempts.")}>Requeue</button>
                    <Result value={flash(`dead:${d.id}`)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
          <PageNote page={deadLetterPage} what="dead letters" />
        </>
      )}
    </section>
  );
}
