"use client";

import { useState } from "react";
import type { z } from "zod";
import { createGroupSubscription, deleteGroupSubscription, type listGroupSubscriptions, type RuleView } from "@/lib/notifications/contract";
import { callApi, type ResponseOf } from "@/components/api-client";
import { PageNote } from "@/components/page-note";
import { attempt, useWhen } from "../api";
import styles from "../notifications.module.css";
import { type Flash, Result, RuleName, Table, useActions } from "./parts";

type Rule = z.output<typeof RuleView>;

/** E-mail groups: who besides the organization's admins gets a rule's e-mail. `rules`: those that deliver by e-mail. */
export function GroupsSection({ groupPage, rules, refresh }: { groupPage: ResponseOf<typeof listGroupSubscriptions>; rules: Rule[]; refresh: () => void }) {
  const when = useWhen();
  const groups = groupPage.items;
  const { flash, act } = useActions(refresh);
  return (
    <section className={styles.section} aria-labelledby="groups-h">
      <h2 id="groups-h">Email groups</h2>
      <p className="muted">A group fans a rule&apos;s email out to its members, besides the organization&apos;s admins.</p>
      <GroupForm rules={rules} onDone={refresh} />
      {groups.length === 0 ? (
        <p className="empty-state">No email groups yet.</p>
      ) : (
        <Table>
          <thead><tr><th>Group</th><th>Rule</th><th>Members</th><th>Created</th><th /></tr></thead>
          <tbody>
            {groups.map((g) => (
              <tr key={g.id}>
                <td>{g.group_name}</td>
                <td><RuleName ruleKey={g.rule_key} /></td>
                <td>{g.members.join(", ")}</td>
                <td className={styles.nowrap}>{when(g.created_at)}</td>
                <td>
                  <button className="button danger" type="button" onClick={() => void act(`group:${g.id}`, () => callApi(deleteGroupSubscription, { params: { id: g.id } }), "Removed.")}>Remove</button>
                  <Result value={flash(`group:${g.id}`)} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <PageNote page={groupPage} what="groups" />
    </section>
  );
}

function GroupForm({ rules, onDone }: { rules: Rule[]; onDone: () => void }) {
  const [ruleKey, setRuleKey] = useState("");
  const [name, setName] = useState("");
  const [members, setMembers] = useState("");
  const [status, setStatus] = useState<Flash>(null);
  if (rules.length === 0) return <p className="muted">To add a group, first create a rule that delivers by email.</p>;

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    const list = members.split(/[\s,;]+/).filter(Boolean);
    const res = await attempt(() => callApi(createGroupSubscription, { body: { rule_key: ruleKey || rules[0].key, group_name: name, members: list } }));
    if (!res.ok) return setStatus({ ok: false, text: res.error });
    setStatus({ ok: true, text: `Group ${name} added.` });
    setName("");
    setMembers("");
    onDone();
  }

  return (
    <form className={styles.inline} onSubmit={(e) => void submit(e)} aria-label="Add email group">
      <select aria-label="Rule" value={ruleKey || rules[0].key} onChange={(e) => setRuleKey(e.target.value)}>
        {rules.map((r) => <option key={r.id} value={r.key}>{r.key}</option>)}
      </select>
      <input aria-label="Group name" placeholder="Group name" value={name} onChange={(e) => setName(e.target.value)} required />
      <input aria-label="Members" className={styles.grow} placeholder="Member emails, comma separated" value={members} onChange={(e) => setMembers(e.target.value)} required />
      <button className="button" type="submit">Add group</button>
      <Result value={status} />
    </form>
  );
}
