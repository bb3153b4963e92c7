"use client";

import { useState } from "react";
import ReactECharts from "echarts-for-react";
import type { z } from "zod";
import type { ChannelConfigView, DeliveryHealth, DeliveryView, GroupSubscriptionView, RuleView } from "@/lib/notifications/contract";
import styles from "./notifications.module.css";

type Channel = z.output<typeof ChannelConfigView>;
type Rule = z.output<typeof RuleView>;
type Group = z.output<typeof GroupSubscriptionView>;
type Health = z.output<typeof DeliveryHealth>;
type Delivery = z.output<typeof DeliveryView>;

interface Props {
  channels: Channel[];
  rules: Rule[];
  groups: Group[];
  health: Health;
  deadLetters: Delivery[];
  deadLetterTotal: number;
}

/** Reads `{"detail": ...}` from a failed API answer into one line. */
async function problem(res: Response): Promise<string> {
  const body = (await res.json().catch(() => null)) as { detail?: unknown } | null;
  const detail = body?.detail;
  if (Array.isArray(detail)) return detail.map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).join(".")}: ${d.msg}`).join("; ");
  return typeof detail === "string" ? detail : `HTTP ${res.status}`;
}

const fmt = (iso: string | null) => (iso ? new Date(iso).toISOString().replace("T", " ").slice(0, 16) + " UTC" : "—");

export function NotificationsAdmin({ channels, rules, groups, health, deadLetters, deadLetterTotal }: Props) {
  const [tests, setTests] = useState<Record<string, { ok: boolean; text: string }>>({});
  const [dead, setDead] = useState(deadLetters);
  const [message, setMessage] = useState<string | null>(null);

  async function sendTest(kind: string) {
    setTests((t) => ({ ...t, [kind]: { ok: true, text: "Sending…" } }));
    const res = await fetch(`/api/v1/notifications/admin/channel-configs/${kind}/test`, { method: "POST" });
    if (!res.ok) {
      const text = await problem(res);
      setTests((t) => ({ ...t, [kind]: { ok: false, text } }));
      return;
    }
    const body = (await res.json()) as { ok: boolean; recipient: string; detail: string };
    setTests((t) => ({ ...t, [kind]: { ok: body.ok, text: `${body.detail} (${body.recipient})` } }));
  }

  async function requeue(id: string) {
    const res = await fetch(`/api/v1/notifications/admin/dead-letters/${id}/requeue`, { method: "POST" });
    if (!res.ok) {
      setMessage(await problem(res));
      return;
    }
    setDead((list) => list.filter((d) => d.id !== id));
    setMessage("Requeued: a fresh round of attempts has started.");
  }

  const chart = {
    tooltip: { trigger: "axis" },
    legend: { data: ["delivered", "dead", "skipped", "in flight"] },
    grid: { left: 40, right: 16, top: 32, bottom: 32 },
    xAxis: { type: "time" },
    yAxis: { type: "value", minInterval: 1 },
    series: [
      { name: "delivered", type: "bar", stack: "d", data: health.series.map((s) => [s.bucket, s.delivered]) },
      { name: "dead", type: "bar", stack: "d", data: health.series.map((s) => [s.bucket, s.dead]) },
      { name: "skipped", type: "bar", stack: "d", data: health.series.map((s) => [s.bucket, s.skipped]) },
      { name: "in flight", type: "bar", stack: "d", data: health.series.map((s) => [s.bucket, s.in_flight]) },
    ],
  };

  return (
    <>
      {message && <p className="muted" role="status">{message}</p>}

      <section className={styles.section}>
        <h2>Channels</h2>
        <table className="grid-table">
          <thead><tr><th>Kind</th><th>Status</th><th>Settings</th><th>Updated</th><th /></tr></thead>
          <tbody>
            {channels.map((c) => (
              <tr key={c.kind}>
                <td>{c.kind}</td>
                <td><span className="chip">{!c.configured ? "not configured" : c.enabled ? "enabled" : "disabled"}</span></td>
                <td className={styles.mono}>{Object.entries(c.config).map(([k, v]) => `${k}: ${String(v)}`).join(", ") || "—"}</td>
                <td>{fmt(c.updated_at)}</td>
                <td>
                  <div className={styles.row}>
                    <button className="button" type="button" disabled={!c.configured} onClick={() => void sendTest(c.kind)}>Send test</button>
                    {tests[c.kind] && <span className={`${styles.result} ${tests[c.kind].ok ? styles.ok : styles.failed}`}>{tests[c.kind].text}</span>}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <p className="muted">Set providers with <code>PUT /api/v1/notifications/admin/channel-configs/&#123;kind&#125;</code>; secrets are stored encrypted and shown masked.</p>
      </section>

      <section className={styles.section}>
        <h2>Rules</h2>
        {rules.length === 0 ? <p className="empty-state">No custom rules yet.</p> : (
          <table className="grid-table">
            <thead><tr><th>Key</th><th>Base rule</th><th>Thresholds</th><th>Severity</th><th>Channels</th><th>Cadence</th><th>Next runs</th></tr></thead>
            <tbody>
              {rules.map((r) => (
                <tr key={r.id}>
                  <td title={r.description}>{r.key}{!r.enabled && <span className="chip"> disabled</span>}</td>
                  <td>{r.base_rule_key}</td>
                  <td className={styles.mono}>{Object.entries(r.thresholds).map(([k, v]) => `${k}=${v}`).join(", ")}</td>
                  <td><span className="chip">{r.severity}</span></td>
                  <td>{r.default_channels.join(", ")}</td>
                  <td className={styles.mono}>{r.cadence_cron}</td>
                  <td>{r.next_runs.slice(0, 3).map(fmt).join(" · ") || "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section className={styles.section}>
        <h2>Email groups</h2>
        {groups.length === 0 ? <p className="empty-state">No group subscriptions.</p> : (
          <table className="grid-table">
            <thead><tr><th>Group</th><th>Rule</th><th>Members</th></tr></thead>
            <tbody>{groups.map((g) => <tr key={g.id}><td>{g.group_name}</td><td>{g.rule_key}</td><td>{g.members.join(", ")}</td></tr>)}</tbody>
          </table>
        )}
      </section>

      <section className={styles.section}>
        <h2>Delivery health</h2>
        <div className={styles.row}>
          {health.channels.map((c) => (
            <span key={c.channel} className="chip">
              {c.channel}: {c.success_rate === null ? "no finished deliveries" : `${Math.round(c.success_rate * 100)}% delivered`} ({c.delivered} ok, {c.dead} dead, {c.skipped} skipped)
            </span>
          ))}
        </div>
        <ReactECharts className={styles.chart} option={chart} notMerge />
        <table className="grid-table">
          <thead><tr><th>When</th><th>Rule</th><th>Channel</th><th>Recipient</th><th>Status</th><th>Why</th></tr></thead>
          <tbody>
            {health.recent.map((d) => (
              <tr key={d.id}><td>{fmt(d.created_at)}</td><td>{d.rule_key}</td><td>{d.channel}</td><td>{d.recipient}</td><td><span className="chip">{d.status}</span></td><td>{d.reason}{d.last_error ? ` — ${d.last_error}` : ""}</td></tr>
            ))}
          </tbody>
        </table>
      </section>

      <section className={styles.section}>
        <h2>Dead letters ({deadLetterTotal})</h2>
        {dead.length === 0 ? <p className="empty-state">Nothing failed permanently.</p> : (
          <table className="grid-table">
            <thead><tr><th>Failed</th><th>Rule</th><th>Channel</th><th>Recipient</th><th>Attempts</th><th>Last error</th><th /></tr></thead>
            <tbody>
              {dead.map((d) => (
                <tr key={d.id}>
                  <td>{fmt(d.created_at)}</td><td>{d.rule_key}</td><td>{d.channel}</td><td>{d.recipient}</td><td>{d.attempts}/{d.max_attempts}</td>
                  <td className={styles.mono}>{d.last_error ?? d.reason}</td>
                  <td><button className="button" type="button" onClick={() => void requeue(d.id)}>Requeue</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
