"use client";

import { useState } from "react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import type { z } from "zod";
import { callApi } from "@/components/api-client";
import type { AlertEvaluationView } from "@/lib/alerts/contract";
import { deleteAlert, getAlert, muteAlert, snoozeAlert, testAlert, type AlertDetailView } from "@/lib/alerts/api-contract";
import { cronInWords, formatInstant, formatNumber, humanize } from "@/lib/dashboards/format";
import { AlertHistoryChart } from "./alert-history-chart";
import styles from "./alerts.module.css";

type Detail = z.infer<typeof AlertDetailView>;

const SNOOZES = [
  { label: "1 hour", ms: 3_600_000 },
  { label: "1 day", ms: 86_400_000 },
  { label: "1 week", ms: 7 * 86_400_000 },
];

const figure = (value: number | null) => (value === null ? "—" : formatNumber(value));
const OUTCOME_WORDS: Record<AlertEvaluationView["outcome"], string> = { met: "Met", not_met: "Not met", no_data: "No data", below_min_volume: "Below the minimum volume", error: "Error" };
/** A scope key (role:loc1,loc2 or role:*) in words: the role, and the locations by name (an id the reader cannot see as it is). */
const scopeWords = (key: string, locationNames: Readonly<Record<string, string>>) => {
  const [role, locations] = key.split(":");
  return `${humanize(role ?? "")}, ${locations === "*" ? "every location" : (locations ?? "").split(",").map((id) => locationNames[id] ?? id).join(", ")}`;
};

/**
 * One alert's page: what it watches and when it speaks, its state per scope, the history chart of its evaluations
 * (met and not met told apart), the latest evaluations as a table, and its switches: test now (evaluates, sends
 * nothing), snooze, mute, delete.
 */
export function AlertDetail({ initial, canChange, timeZone, locationNames }: { initial: Detail; canChange: boolean; timeZone: string; locationNames: Readonly<Record<string, string>> }) {
  /** A moment in the organization's zone, the zone named (the one formatter). */
  const when = (iso: string | null) => formatInstant(iso, timeZone);
  const router = useRouter();
  const [alert, setAlert] = useState(initial);
  const [busy, setBusy] = useState<string | null>(null);
  const [message, setMessage] = useState<{ tone: "error" | "success"; text: string } | null>(null);
  const [tested, setTested] = useState<AlertEvaluationView[] | null>(null);
  const params = { id: alert.id };

  async function act(name: string, work: () => Promise<unknown>, done: string) {
    setBusy(name);
    setMessage(null);
    try {
      await work();
      setAlert(await callApi(getAlert, { params }));
      setMessage({ tone: "success", text: done });
    } catch (error) {
      setMessage({ tone: "error", text: (error as Error).message });
    } finally {
      setBusy(null);
    }
  }

  const testNow = () => act("test", async () => setTested((await callApi(testAlert, { params })).evaluations), "Tested: evaluated now, nothing sent, no state moved.");
  const snooze = (until: string | null) => act("snooze", () => callApi(snoozeAlert, { params, body: { until } }), until ? `Snoozed until ${when(until)}.` : "Snooze ended.");
  const mute = (muted: boolean) => act("mute", () => callApi(muteAlert, { params, body: { muted } }), muted ? "Muted." : "Unmuted.");
  async function remove() {
    if (!window.confirm(`Delete the alert "${alert.name}" and its history?`)) return;
    setBusy("delete");
    try {
      await callApi(deleteAlert, { params });
      router.push("/alerts");
    } catch (error) {
      setMessage({ tone: "error", text: (error as Error).message });
      setBusy(null);
    }
  }

  const snoozed = alert.snoozed_until !== null && new Date(alert.snoozed_until) > new Date();
  const widget = alert.widget_name ?? "a widget no longer on the dashboard";
  const watched = alert.column ? `${humanize(alert.column)} of ${widget}` : widget;
  return (
    <div className={styles.body} style={{ padding: 0 }}>
      <section className={styles.panel} aria-labelledby="alert-what">
        <h2 id="alert-what" style={{ margin: 0, fontSize: "1rem" }}>
          What it watches
        </h2>
        <p style={{ margin: 0 }}>
          {watched} on <Link href={`/dashboards/custom/${encodeURIComponent(alert.dashboard_slug)}`}>{alert.dashboard_name}</Link>: tells when the value is {alert.condition_text}
          {alert.per ? `, for each ${humanize(alert.per)}` : ""}. Checked {alert.cadence.kind === "cron" ? cronInWords(alert.cadence.cron, timeZone).replace(/^./, (c) => c.toLowerCase()) : "whenever the data changes"}.
          {alert.manifest_id !== null && ` Declared in the dashboard's manifest as '${alert.manifest_id}'.`}
        </p>
        <p className={styles.hint} style={{ margin: 0 }}>
          {alert.muted ? "Muted: evaluated and recorded, nobody is told. " : ""}
          {snoozed ? `Snoozed until ${when(alert.snoozed_until)}. ` : ""}
          {alert.notify_on_resolved ? "Tells when it resolves too. " : ""}
          {alert.renotify_minutes ? `Tells again every ${alert.renotify_minutes} min while firing. ` : ""}
          {alert.only_once ? "Tells once per firing. " : ""}
        </p>
        {canChange && (
          <div className={styles.actions} style={{ justifyContent: "flex-start" }} role="group" aria-label="Alert actions">
            <button type="button" className="button primary" onClick={testNow} disabled={busy !== null}>
              {busy === "test" ? "Testing…" : "Test now"}
            </button>
            {SNOOZES.map((s) => (
              <button key={s.label} type="button" className="button" disabled={busy !== null} onClick={() => snooze(new Date(Date.now() + s.ms).toISOString())}>
                Snooze {s.label}
              </button>
            ))}
            {snoozed && (
              <button type="button" className="button" disabled={busy !== null} onClick={() => snooze(null)}>
                End snooze
              </button>
            )}
            <button type="button" className="button" aria-pressed={alert.muted} disabled={busy !== null} onClick={() => mute(!alert.muted)}>
              {alert.muted ? "Unmute" : "Mute"}
            </button>
            {alert.manifest_id === null && (
              <button type="button" className="button" disabled={busy !== null} onClick={remove}>
                Delete
              </button>
            )}
          </div>
        )}
        {message && (
          <p role={message.tone === "error" ? "alert" : "status"} className={message.tone === "error" ? styles.error : styles.success}>
            {message.text}
          </p>
        )}
        {tested && <EvaluationTable caption="Test now: what each scope would find" evaluations={tested} timeZone={timeZone} locationNames={locationNames} />}
      </section>

      <section className={styles.panel} aria-labelledby="alert-state">
        <h2 id="alert-state" style={{ margin: 0, fontSize: "1rem" }}>
          State
        </h2>
        {alert.states.length === 0 ? (
          <p className={styles.hint}>Not evaluated yet on its cadence.</p>
        ) : (
          <table className={styles.table}>
            <thead>
              <tr>
                <th scope="col">Scope</th>
                {alert.per && <th scope="col">{humanize(alert.per)}</th>}
                <th scope="col">State</th>
                <th scope="col">Since</th>
                <th scope="col">Last value</th>
                <th scope="col">Last told</th>
              </tr>
            </thead>
            <tbody>
              {alert.states.map((s) => (
                <tr key={`${s.scope_key} ${s.dimension_value}`}>
                  <td>{scopeWords(s.scope_key, locationNames)}</td>
                  {alert.per && <td>{s.dimension_value}</td>}
                  <td>
                    <span className={styles.state} data-state={s.state}>
                      {s.state}
                    </span>
                  </td>
                  <td>{when(s.since)}</td>
                  <td>{figure(s.last_value)}</td>
                  <td>{when(s.last_notified_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section className={styles.panel} aria-labelledby="alert-history">
        <h2 id="alert-history" style={{ margin: 0, fontSize: "1rem" }}>
          History
        </h2>
        {alert.evaluations.length === 0 ? (
          <p className={styles.hint}>No evaluations yet.</p>
        ) : (
          <>
            <AlertHistoryChart evaluations={alert.evaluations} condition={alert.condition} label={`Values of ${alert.name} over its last ${alert.evaluations.length} evaluations; met, not met and not judged drawn apart`} />
            <EvaluationTable caption="Latest evaluations" evaluations={alert.evaluations.slice(0, 20)} timeZone={timeZone} locationNames={locationNames} />
          </>
        )}
      </section>
    </div>
  );
}

function EvaluationTable({ caption, evaluations, timeZone, locationNames }: { caption: string; evaluations: readonly AlertEvaluationView[]; timeZone: string; locationNames: Readonly<Record<string, string>> }) {
  return (
    <table className={styles.table} data-testid="alert-evaluations">
      <caption style={{ textAlign: "left", fontWeight: 600, padding: "0.3rem 0" }}>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Scope</th>
          <th scope="col">Value</th>
          <th scope="col">Previous</th>
          <th scope="col">Outcome</th>
          <th scope="col">State</th>
          <th scope="col">Answered by</th>
        </tr>
      </thead>
      <tbody>
        {evaluations.map((e) => (
          <tr key={e.id} data-outcome={e.outcome}>
            <td>
              {formatInstant(e.evaluated_at, timeZone)}
              {e.trigger === "test" ? " (test)" : ""}
            </td>
            <td>
              {scopeWords(e.scope_key, locationNames)}
              {e.dimension_value ? ` · ${e.dimension_value}` : ""}
            </td>
            <td>{figure(e.value)}</td>
            <td>{figure(e.previous_value)}</td>
            <td>{e.error ? `${OUTCOME_WORDS[e.outcome]}: ${e.error}` : OUTCOME_WORDS[e.outcome]}</td>
            <td>{e.state}</td>
            <td>{e.source === "rollup" ? `rollup ${e.rollup ?? ""}` : e.source === "base" ? "the tables" : "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
