"use client";

import { useState } from "react";
import type { z } from "zod";
import {
  createGroupSubscription,
  createUnsubscribe,
  deleteGroupSubscription,
  deleteUnsubscribe,
  requeueDeadLetter,
  testChannel,
  triggerRule,
  updateRule,
  type DeliveryHealth,
  type GroupSubscriptionView,
  type RuleView,
} from "@/lib/notifications/contract";
import type { PageQuery } from "@/lib/pagination";
import { callApi, type ResponseOf } from "@/components/api-client";
import { PageNote } from "@/components/page-note";
import { channelLabel } from "@/lib/notifications/channel-kinds";
import { picturesIn } from "@/lib/notifications/transports/picture-line";
import { useNotificationsAdmin } from "@/components/api-hooks";
import type {
  deliveryHealth,
  getQuietHours,
  listChannelConfigs,
  listDeadLetters,
  listDemoOutbox,
  listGroupSubscriptions,
  listRules,
  listUnsubscribes,
} from "@/lib/notifications/contract";
import { cronInWords, formatInstant } from "@/lib/dashboards/format";
import { attempt, when } from "./api";
import { ChannelEditor } from "./channel-editor";
import { HealthChart } from "./health-chart";
import { QuietHoursEditor, type QuietHours } from "./quiet-hours-editor";
import { RuleForm, type BaseRule } from "./rule-form";
import styles from "./notifications.module.css";

/** Rules' cadences are read in UTC (lib/notifications/settings/cron.ts): their runs are shown there, the zone named. */
const RULE_ZONE = "UTC";

type Channel = NotificationsAdminProps["channels"]["items"][number];
type Rule = z.output<typeof RuleView>;
type Group = z.output<typeof GroupSubscriptionView>;
type Health = z.output<typeof DeliveryHealth>;

/** The server render's answers of the page's reads (the same shapes the API answers); swr keeps them fresh. */
export interface NotificationsAdminProps {
  channels: ResponseOf<typeof listChannelConfigs>;
  rules: ResponseOf<typeof listRules>;
  baseRules: BaseRule[];
  groups: ResponseOf<typeof listGroupSubscriptions>;
  unsubscribes: ResponseOf<typeof listUnsubscribes>;
  quietHours: ResponseOf<typeof getQuietHours> & QuietHours;
  health: ResponseOf<typeof deliveryHealth>;
  healthHours: number;
  /** The page of rules, groups and unsubscribes the server render read (the forms offer the rules and groups in it). */
  listPage: PageQuery;
  deadLetters: ResponseOf<typeof listDeadLetters>;
  deadLetterPage: PageQuery;
  /** The demo's e-mail outbox (the first page, newest first); shown while the e-mail channel is the outbox. */
  demoOutbox: ResponseOf<typeof listDemoOutbox>;
}

const STATUS_TONE: Record<string, string> = { delivered: "good", dead: "bad", retrying: "warn", skipped: "", pending: "", sending: "" };

/** A data table that scrolls sideways inside its own box on a narrow screen instead of widening the page. */
function Table(props: React.ComponentProps<"table">) {
  return (
    <div className={styles.scroll}>
      <table className="grid-table" {...props} />
    </div>
  );
}

function StatusChip({ status }: { status: string }) {
  return <span className={`chip ${STATUS_TONE[status] ?? ""}`}>{status}</span>;
}

type Flash = { ok: boolean; text: string } | null;

function Result({ value }: { value: Flash }) {
  if (!value) return null;
  return <span role="status" className={`${styles.result} ${value.ok ? styles.ok : styles.failed}`}>{value.text}</span>;
}

export function NotificationsAdmin(props: NotificationsAdminProps) {
  const { baseRules, healthHours, quietHours } = props;
  const live = useNotificationsAdmin(props);
  const channels = (live.channels ?? props.channels).items;
  const rulePage = live.rules ?? props.rules;
  const groupPage = live.groups ?? props.groups;
  const unsubscribePage = live.unsubscribes ?? props.unsubscribes;
  const deadLetterPage = live.deadLetters ?? props.deadLetters;
  const rules = rulePage.items;
  const groups = groupPage.items;
  const unsubscribes = unsubscribePage.items;
  const health = live.health ?? props.health;
  const { items: deadLetters, total: deadLetterTotal } = deadLetterPage;
  const outbox = live.demoOutbox ?? props.demoOutbox;
  const outboxChannel = channels.some((c) => c.config.demo_outbox === true);
  const refresh = () => void live.refresh();
  const [editing, setEditing] = useState<string | null>(null);
  const [creatingRule, setCreatingRule] = useState(false);
  const [flash, setFlash] = useState<Record<string, Flash>>({});
  const note = (key: string, value: Flash) => setFlash((f) => ({ ...f, [key]: value }));

  const usable = channels.filter((c) => c.configured && c.enabled).map((c) => c.kind);
  const emailRules = rules.filter((r) => r.default_channels.includes("email"));

  async function act(key: string, call: () => Promise<unknown>, done: string) {
    note(key, { ok: true, text: "Working…" });
    const res = await attempt(call);
    if (!res.ok) return note(key, { ok: false, text: res.error });
    const outcome = res.data as { ok?: boolean; detail?: string } | undefined;
    if (outcome && outcome.ok === false) return note(key, { ok: false, text: `Test failed: ${outcome.detail}` });
    note(key, { ok: true, text: done });
    refresh();
  }

  return (
    <>
      <div className={styles.summary}>
        <div className="card"><h2>{usable.length} of {channels.length}</h2><p>channels ready</p></div>
        <div className="card"><h2>{rules.filter((r) => r.enabled).length}</h2><p>active rules</p></div>
        <div className="card">
          <h2>{summaryRate(health)}</h2>
          <p>delivered, last {healthHours} h</p>
        </div>
        <div className="card"><h2 className={deadLetterTotal > 0 ? styles.failed : undefined}>{deadLetterTotal}</h2><p>dead letters</p></div>
      </div>

      <section className={styles.section} aria-labelledby="channels-h">
        <h2 id="channels-h">Channels</h2>
        <Table>
          <thead><tr><th>Channel</th><th>Status</th><th>Settings</th><th>Updated</th><th>Actions</th></tr></thead>
          <tbody>
            {channels.map((c) => (
              <ChannelRow
                key={c.kind}
                channel={c}
                editing={editing === c.kind}
                flash={flash[`test:${c.kind}`] ?? null}
                onEdit={() => setEditing(editing === c.kind ? null : c.kind)}
                onTest={() => void act(`test:${c.kind}`, () => callApi(testChannel, { params: { kind: c.kind } }), "Test message sent.")}
                onSaved={() => {
                  setEditing(null);
                  refresh();
                }}
              />
            ))}
          </tbody>
        </Table>
        <p className="muted">Secrets are stored encrypted and shown masked. Webhook and SMTP targets must be public addresses unless the server allow-lists them.</p>
      </section>

      <section className={styles.section} aria-labelledby="rules-h">
        <div className={styles.heading}>
          <h2 id="rules-h">Rules</h2>
          {!creatingRule && <button className="button primary" type="button" onClick={() => setCreatingRule(true)}>New rule</button>}
        </div>
        {creatingRule && (
          <RuleForm
            baseRules={baseRules}
            usableChannels={usable}
            onCancel={() => setCreatingRule(false)}
            onCreated={(key) => {
              setCreatingRule(false);
              note("rules", { ok: true, text: `Rule ${key} created.` });
              refresh();
            }}
          />
        )}
        <Result value={flash.rules ?? null} />
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
                    <Result value={flash[`rule:${r.id}`] ?? null} />
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        <PageNote page={rulePage} what="rules" />
      </section>

      <section className={styles.section} aria-labelledby="groups-h">
        <h2 id="groups-h">Email groups</h2>
        <p className="muted">A group fans a rule&apos;s email out to its members, besides the organization&apos;s admins.</p>
        <GroupForm rules={emailRules} onDone={refresh} />
        {groups.length === 0 ? (
          <p className="empty-state">No email groups yet.</p>
        ) : (
          <Table>
            <thead><tr><th>Group</th><th>Rule</th><th>Members</th><th>Created</th><th /></tr></thead>
            <tbody>
              {groups.map((g) => (
                <tr key={g.id}>
                  <td>{g.group_name}</td>
                  <td className={styles.mono}>{g.rule_key}</td>
                  <td>{g.members.join(", ")}</td>
                  <td className={styles.nowrap}>{when(g.created_at)}</td>
                  <td>
                    <button className="button danger" type="button" onClick={() => void act(`group:${g.id}`, () => callApi(deleteGroupSubscription, { params: { id: g.id } }), "Removed.")}>Remove</button>
                    <Result value={flash[`group:${g.id}`] ?? null} />
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        <PageNote page={groupPage} what="groups" />
      </section>

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
                  <td>{u.address ?? u.user_id}</td>
                  <td>{u.scope === "all" ? "every rule" : u.scope === "rule" ? `rule ${u.rule_key}` : `group ${u.group_name}`}</td>
                  <td className={styles.nowrap}>{when(u.created_at)}</td>
                  <td>
                    <button className="button" type="button" onClick={() => void act(`unsub:${u.id}`, () => callApi(deleteUnsubscribe, { params: { id: u.id } }), "Subscribed again.")}>Resubscribe</button>
                    <Result value={flash[`unsub:${u.id}`] ?? null} />
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        <PageNote page={unsubscribePage} what="unsubscribes" />
      </section>

      <section className={styles.section} aria-labelledby="quiet-h">
        <h2 id="quiet-h">Quiet hours</h2>
        <QuietHoursEditor initial={quietHours} onSaved={refresh} />
      </section>

      <section className={styles.section} aria-labelledby="health-h">
        <h2 id="health-h">Delivery health <span className="muted">· last {healthHours} hours</span></h2>
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
                    <td className={styles.mono}>{d.rule_key}</td>
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

      {(outboxChannel || outbox.total > 0) && (
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
                    <td className={styles.mono}>{m.rule_key}</td>
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
      )}

      <section className={styles.section} aria-labelledby="dead-h">
        <h2 id="dead-h">Dead letters ({deadLetterTotal})</h2>
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
                    <td className={styles.mono}>{d.rule_key}</td>
                    <td>{channelLabel(d.channel)}</td>
                    <td>{d.recipient}</td>
                    <td>{d.attempts}/{d.max_attempts}</td>
                    <td className={styles.mono}>{d.last_error ?? d.reason}</td>
                    <td>
                      <button className="button" type="button" onClick={() => void act(`dead:${d.id}`, () => callApi(requeueDeadLetter, { params: { id: d.id } }), "Requeued for a fresh round of attempts.")}>Requeue</button>
                      <Result value={flash[`dead:${d.id}`] ?? null} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </Table>
            <PageNote page={deadLetterPage} what="dead letters" />
          </>
        )}
      </section>
    </>
  );
}

function summaryRate(health: Health): string {
  const delivered = health.channels.reduce((n, c) => n + c.delivered, 0);
  const dead = health.channels.reduce((n, c) => n + c.dead, 0);
  return delivered + dead === 0 ? "—" : `${Math.round((delivered / (delivered + dead)) * 100)}%`;
}

interface ChannelRowProps {
  channel: Channel;
  editing: boolean;
  flash: Flash;
  onEdit: () => void;
  onTest: () => void;
  onSaved: () => void;
}

function ChannelRow({ channel: c, editing, flash, onEdit, onTest, onSaved }: ChannelRowProps) {
  const settings = Object.entries(c.config).map(([k, v]) => `${k}: ${String(v)}`).join(" · ");
  return (
    <>
      <tr data-channel={c.kind}>
        <td><strong>{channelLabel(c.kind)}</strong></td>
        <td className={styles.nowrap}>{!c.configured ? <span className="chip warn">not configured</span> : c.enabled ? <span className="chip good">enabled</span> : <span className="chip">disabled</span>}</td>
        <td className={styles.mono}>
          {c.config.demo_outbox === true ? <><span className="chip warn">demo outbox</span> kept below, never sent{c.kind === "email" ? ` · from: ${String(c.config.from)}` : ""}</> : settings || (c.kind === "in_app" ? "bell of every admin" : "—")}
        </td>
        <td className={styles.nowrap}>{when(c.updated_at)}</td>
        <td>
          <div className={`${styles.row} ${styles.nowrap}`}>
            <button className="button" type="button" onClick={onEdit} aria-expanded={editing}>{c.configured && c.kind !== "in_app" ? "Edit" : "Configure"}</button>
            <button className="button" type="button" disabled={!c.configured || !c.enabled} onClick={onTest}>Send test</button>
          </div>
          <Result value={flash} />
        </td>
      </tr>
      {editing && (
        <tr>
          <td colSpan={5}>
            <ChannelEditor kind={c.kind} enabled={c.enabled} configured={c.configured} config={c.config} onSaved={onSaved} onCancel={onEdit} />
          </td>
        </tr>
      )}
    </>
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

function UnsubscribeForm({ rules, groups, onDone }: { rules: Rule[]; groups: Group[]; onDone: () => void }) {
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
        {groups.map((g) => <option key={g.id} value={`group:${g.id}`}>from group {g.group_name} ({g.rule_key})</option>)}
      </select>
      <button className="button" type="submit">Unsubscribe</button>
      <Result value={status} />
    </form>
  );
}

const RUN_CHIP = { queued: "", fired: "warn", quiet: "good", error: "bad" } as const;
const RUN_TEXT = { queued: "queued", fired: "fired", quiet: "nothing to report", error: "failed" } as const;

/** What a rule did last: its run's outcome, when, the deliveries per channel, or the evaluation's error (issue 32). */
function LastRun({ rule }: { rule: Rule }) {
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
