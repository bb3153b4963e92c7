"use client";

import { useState } from "react";
import type { z } from "zod";
import { createUnsubscribe, deleteUnsubscribe, type GroupSubscriptionView, type listUnsubscribes, type RuleView } from "@/lib/notifications/contract";
import { callApi, type ResponseOf } from "@/components/api-client";
import { PageNote } from "@/components/page-note";
import { attempt, useWhen } from "../api";
import styles from "../notifications.module.css";
import { type Flash, Result, RuleName, Table, useActions, useRuleName } from "./parts";

type Rule = z.output<typeof RuleView>;
type Group = z.output<typeof GroupSubscriptionView>;

interface UnsubscribesSectionProps {
  unsubscribePage: ResponseOf<typeof listUnsubscribes>;
  /** What a recipient may be unsubscribed from besides everything. */
  rules: Rule[];
  groups: Group[];
  refresh: () => void;
}

export function UnsubscribesSection({ unsubscribePage, rules, groups, refresh }: UnsubscribesSectionProps) {
  const when = useWhen();
  const unsubscribes = unsubscribePage.items;
  const { flash, act } = useActions(refresh);
  return (
    <section className={styles.section} aria-labelledby="unsub-h">
      <h2 id="unsub-h">Unsubscribes</h2>
      <p className="muted">Deliveries to an unsubscribed address are recorded as skipped, with the reason, in delivery health.</p>
      <UnsubscribeForm rules={rules} groups={groups} onDone={refresh} />
      {unsubscribes.length === 0 ? (
        <p className="empty-state">Nobody has unsubscribed.</p>
      ) : (
        <Table>
          <thead><tr><th>Recipient</th><th>From</th><th>Since</th><th /></tr></thead>
          <tbody>
            {unsubscribes.map((u) => (
              <tr key={u.id}>
                <td>{u.address ?? u.user_name ?? "a former member"}</td>
                <td>{u.scope === "all" ? "every rule" : u.scope === "rule" ? <>rule <RuleName ruleKey={u.rule_key ?? ""} /></> : `group ${u.group_name}`}</td>
                <td className={styles.nowrap}>{when(u.created_at)}</td>
                <td>
                  <button className="button" type="button" onClick={() => void act(`unsub:${u.id}`, () => callApi(deleteUnsubscribe, { params: { id: u.id } }), "Subscribed again.")}>Resubscribe</button>
                  <Result value={flash(`unsub:${u.id}`)} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <PageNote page={unsubscribePage} what="unsubscribes" />
    </section>
  );
}

function UnsubscribeForm({ rules, groups, onDone }: { rules: Rule[]; groups: Group[]; onDone: () => void }) {
  const ruleName = useRuleName();
  const [address, setAddress] = useState("");
  const [scope, setScope] = useState("all");
  const [status, setStatus] = useState<Flash>(null);

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    const [kind, value] = scope.split(":");
    const body = { address, ...(kind === "rule" ? { rule_key: value } : kind === "group" ? { group_subscription_id: value } : {}) };
    const res = await attempt(() => callApi(createUnsubscribe, { body }));
    if (!res.ok) return setStatus({ ok: false, text: res.error });
    setStatus({ ok: true, text: `${address} unsubscribed.` });
    setAddress("");
    onDone();
  }

  return (
    <form className={styles.inline} onSubmit={(e) => void submit(e)} aria-label="Unsubscribe a recipient">
      <input aria-label="Email address" type="email" placeholder="Email address" value={address} onChange={(e) => setAddress(e.target.value)} required />
      <select aria-label="Unsubscribe from" value={scope} onChange={(e) => setScope(e.target.value)}>
        <option value="all">from every rule</option>
        {rules.map((r) => <option key={r.id} value={`rule:${r.key}`}>from rule {r.key}</option>)}
        {groups.map((g) => <option key={g.id} value={`group:${g.id}`}>from group {g.group_name} ({ruleName(g.rule_key)})</option>)}
      </select>
      <button className="button" type="submit">Unsubscribe</button>
      <Result value={status} />
    </form>
  );
}
