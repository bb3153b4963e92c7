"use client";

import { useState } from "react";
import type { z } from "zod";
import { triggerRule, updateRule, type listRules, type RuleView } from "@/lib/notifications/contract";
import { callApi, type ResponseOf } from "@/components/api-client";
import { PageNote } from "@/components/page-note";
import { channelLabel, type ChannelKind } from "@/lib/notifications/channel-kinds";
import { cronInWords, formatInstant } from "@/lib/dashboards/format";
import { useWhen } from "../api";
import { RuleForm, type BaseRule } from "../rule-form";
import styles from "../notifications.module.css";
import { Result, Table, useActions } from "./parts";

/** Rules' cadences are read in UTC (lib/notifications/settings/cron.ts): their runs are shown there, the zone named. */
const RULE_ZONE = "UTC";

type Rule = z.output<typeof RuleView>;

interface RulesSectionProps {
  rulePage: ResponseOf<typeof listRules>;
  baseRules: BaseRule[];
  /** The channels a new rule may deliver by (configured and enabled). */
  usableChannels: ChannelKind[];
  refresh: () => void;
}

export function RulesSection({ rulePage, baseRules, usableChannels, refresh }: RulesSectionProps) {
  const rules = rulePage.items;
  const [creatingRule, setCreatingRule] = useState(false);
  const { flash, note, act } = useActions(refresh);
  return (
    <section className={styles.section} aria-labelledby="rules-h">
      <div className={styles.heading}>
        <h2 id="rules-h">Rules</h2>
        {!creatingRule && <button className="button primary" type="button" onClick={() => setCreatingRule(true)}>New rule</button>}
      </div>
      {creatingRule && (
        <RuleForm
          baseRules={baseRules}
          usableChannels={usableChannels}
          onCancel={() => setCreatingRule(false)}
          onCreated={(key) => {
            setCreatingRule(false);
            note("rules", { ok: true, text: `Rule ${key} created.` });
            refresh();
          }}
        />
      )}
      <Result value={flash("rules")} />
      {rules.length === 0 ? (
        !creatingRule && <p className="empty-state">No custom rules yet. Clone a base rule with “New rule” to start alerting.</p>
      ) : (
        <Table>
          <thead><tr><th>Rule</th><th>Thresholds</th><th>Severity</th><th>Channels</th><th>Cadence</th><th>Next runs</th><th>Last run</th><th>Actions</th></tr></thead>
          <tbody>
            {rules.map((r) => (
              <tr key={r.id} data-rule={r.key}>
                <td>
                  <strong>{r.name}</strong>
                  <div className={`${styles.mono} muted`}>{r.key} ← {r.base_rule_key}</div>
                </td>
                <td className={styles.mono}>{Object.entries(r.thresholds).map(([k, v]) => `${k} = ${v}`).join(", ") || "—"}</td>
                <td><span className={`chip ${r.severity === "critical" ? "bad" : r.severity === "warning" ? "warn" : ""}`}>{r.severity}</span></td>
                <td>{r.default_channels.map(channelLabel).join(", ")}{r.group_subscriptions > 0 && <div className="muted">+{r.group_subscriptions} email group(s)</div>}</td>
                <td>
                  {cronInWords(r.cadence_cron, RULE_ZONE)}
                  <div className={`${styles.mono} muted`}>{r.cadence_cron}</div>
                </td>
                <td>{r.enabled ? r.next_runs.slice(0, 2).map((n) => <div key={n}>{formatInstant(n, RULE_ZONE)}</div>) : <span className="chip warn">disabled</span>}</td>
                <td data-testid="last-run"><LastRun rule={r} /></td>
                <td>
                  <div className={`${styles.row} ${styles.nowrap}`}>
                    <button className="button" type="button" disabled={!r.enabled} onClick={() => void act(`rule:${r.id}`, () => callApi(triggerRule, { params: { id: r.id } }), "Queued: the outcome appears under Last run.")}>Run now</button>
                    <button className="button" type="button" onClick={() => void act(`rule:${r.id}`, () => callApi(updateRule, { params: { id: r.id }, body: { enabled: !r.enabled } }), r.enabled ? "Disabled." : "Enabled.")}>{r.enabled ? "Disable" : "Enable"}</button>
                  </div>
                  <Result value={flash(`rule:${r.id}`)} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <PageNote page={rulePage} what="rules" />
    </section>
  );
}

const RUN_CHIP = { queued: "", fired: "warn", quiet: "good", error: "bad" } as const;
const RUN_TEXT = { queued: "queued", fired: "fired", quiet: "nothing to report", error: "failed" } as const;

/** What a rule did last: its run's outcome, when, the deliveries per channel, or the evaluation's error (issue 32). */
function LastRun({ rule }: { rule: Rule }) {
  const when = useWhen();
  const run = rule.last_run;
  if (!run) return <span className="muted">not run yet</span>;
  const byChannel = new Map<string, string[]>();
  for (const d of run.deliveries) byChannel.set(d.channel, [...(byChannel.get(d.channel) ?? []), `${d.count} ${d.status}`]);
  return (
    <div>
      <span className={`chip ${RUN_CHIP[run.status]}`}>{RUN_TEXT[run.status]}</span>{" "}
      <span className={`muted ${styles.nowrap}`}>{when(run.finished_at ?? run.scheduled_for)}{run.trigger === "manual" ? " · Run now" : ""}</span>
      {[...byChannel].map(([channel, outcomes]) => (
        <div key={channel}>{channelLabel(channel)}: {outcomes.join(", ")}</div>
      ))}
      {run.error && <div className={`${styles.mono} ${styles.failed}`}>{run.error}</div>}
      <div className="muted">fired {rule.fired_runs} time{rule.fired_runs === 1 ? "" : "s"} in all</div>
    </div>
  );
}
