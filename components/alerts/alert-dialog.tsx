"use client";

import { useEffect, useRef, useState, type FormEvent } from "react";
import Link from "next/link";
import { callApi } from "@/components/api-client";
import type { AlertCondition, CreateAlertInput } from "@/lib/alerts/contract";
import { createAlert } from "@/lib/alerts/api-contract";
import { humanize } from "@/lib/dashboards/format";
import type { WidgetManifest } from "@/lib/manifest/schema";
import styles from "./alerts.module.css";

export interface AlertDialogProps {
  dashboardId: string;
  widget: WidgetManifest;
  /** Numeric columns the widget shows (a chart's series, a table's metrics); a KPI watches its own figure. */
  metrics: string[];
  /** Other columns: candidates for one alert per value. */
  dimensions: string[];
  /** The filter values on screen, as the viewer's URL holds them: the alert runs under them. */
  filters: Record<string, unknown>;
  onClose: () => void;
}

const CADENCES = [
  { value: "0 * * * *", label: "Every hour" },
  { value: "0 8 * * *", label: "Every day at 08:00" },
  { value: "0 8 * * 1", label: "Every Monday at 08:00" },
  { value: "on_data_change", label: "When the data changes" },
];

type Kind = AlertCondition["kind"];
const KINDS: { value: Kind; label: string }[] = [
  { value: "below", label: "Drops below" },
  { value: "above", label: "Rises above" },
  { value: "outside", label: "Leaves a range" },
  { value: "change", label: "Changes against the previous period" },
  { value: "no_data", label: "Has no data" },
];

const numberOr = (text: string, fallback: number) => (text.trim() === "" || !Number.isFinite(Number(text)) ? fallback : Number(text));

/**
 * "Alert me" on a widget of the viewer (issue 45 §1): the condition on the figure the widget shows (a KPI's value, a
 * chart's series, a table's metric), under the filters on screen, with its cadence and who hears it (you, by e-mail and
 * in the app). Opened by the dashboard view for one widget; a native modal dialog, so focus stays in it and Escape closes it.
 */
export function AlertDialog({ dashboardId, widget, metrics, dimensions, filters, onClose }: AlertDialogProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const kpi = widget.spec.component === "kpi";
  const [name, setName] = useState(`${widget.metadata.name} alert`);
  const [column, setColumn] = useState(metrics[0] ?? "");
  const [reduce, setReduce] = useState<"last" | "sum" | "min" | "max" | "mean" | "first">(widget.spec.component === "echarts" ? "last" : "sum");
  const [per, setPer] = useState("");
  const [kind, setKind] = useState<Kind>("below");
  const [threshold, setThreshold] = useState("");
  const [low, setLow] = useState("");
  const [high, setHigh] = useState("");
  const [against, setAgainst] = useState<"day" | "week" | "month">("week");
  const [measure, setMeasure] = useState<"percent" | "absolute">("percent");
  const [direction, setDirection] = useState<"decrease" | "increase" | "either">("decrease");
  const [amount, setAmount] = useState("10");
  const [cadence, setCadence] = useState(CADENCES[1].value);
  const [channels, setChannels] = useState<Set<"email" | "in_app">>(new Set(["email", "in_app"]));
  const [notifyOnResolved, setNotifyOnResolved] = useState(true);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ tone: "error" | "success"; text: string; id?: string } | null>(null);

  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
  }, []);

  function condition(): AlertCondition {
    switch (kind) {
      case "above":
      case "below":
        return { kind, threshold: numberOr(threshold, Number.NaN) };
      case "outside":
        return { kind, low: numberOr(low, Number.NaN), high: numberOr(high, Number.NaN) };
      case "change":
        return { kind, against, measure, direction, amount: numberOr(amount, Number.NaN) };
      case "no_data":
        return { kind };
    }
  }

  async function create(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setMessage(null);
    try {
      const body: CreateAlertInput = {
        dashboard_id: dashboardId,
        name: name.trim(),
        widget_id: widget.metadata.id,
        ...(kpi ? {} : { column, reduce }),
        ...(per ? { per } : {}),
        condition: condition(),
        filters,
        cadence: cadence === "on_data_change" ? { kind: "on_data_change" } : { kind: "cron", cron: cadence },
        recipients: { me: true, user_channels: [...channels] },
        notify_on_resolved: notifyOnResolved,
      };
      const made = await callApi(createAlert, { body });
      setMessage({ tone: "success", text: `Alert "${made.name}" created.`, id: made.id });
    } catch (error) {
      setMessage({ tone: "error", text: `Not created: ${(error as Error).message}` });
    } finally {
      setBusy(false);
    }
  }

  const filterCount = Object.keys(filters).length;
  return (
    <dialog ref={dialog} className={styles.dialog} aria-labelledby="alert-dialog-title" onClose={onClose} data-testid="alert-dialog">
      <form className={styles.body} onSubmit={create}>
        <h2 id="alert-dialog-title">Alert me: {widget.metadata.name}</h2>
        <label className={styles.field}>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
        </label>
        {!kpi && (
          <div className={styles.row}>
            <label className={styles.field}>
              {widget.spec.component === "echarts" ? "Series" : "Metric"}
              <select value={column} onChange={(e) => setColumn(e.target.value)} required>
                {metrics.map((m) => (
                  <option key={m} value={m}>
                    {humanize(m)}
                  </option>
                ))}
              </select>
            </label>
            <label className={styles.field}>
              Rows make one value by
              <select value={reduce} onChange={(e) => setReduce(e.target.value as typeof reduce)}>
                <option value="last">the last row</option>
                <option value="first">the first row</option>
                <option value="sum">their sum</option>
                <option value="mean">their mean</option>
                <option value="min">their minimum</option>
                <option value="max">their maximum</option>
              </select>
            </label>
            {dimensions.length > 0 && (
              <label className={styles.field}>
                One alert per
                <select value={per} onChange={(e) => setPer(e.target.value)}>
                  <option value="">(the whole widget)</option>
                  {dimensions.map((d) => (
                    <option key={d} value={d}>
                      {humanize(d)}
                    </option>
                  ))}
                </select>
              </label>
            )}
          </div>
        )}
        <div className={styles.row}>
          <label className={styles.field}>
            When the value
            <select value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
              {KINDS.map((k) => (
                <option key={k.value} value={k.value}>
                  {k.label}
                </option>
              ))}
            </select>
          </label>
          {(kind === "above" || kind === "below") && (
            <label className={styles.field}>
              Threshold
              <input type="number" step="any" value={threshold} onChange={(e) => setThreshold(e.target.value)} required inputMode="decimal" />
            </label>
          )}
          {kind === "outside" && (
            <>
              <label className={styles.field}>
                Low
                <input type="number" step="any" value={low} onChange={(e) => setLow(e.target.value)} required />
              </label>
              <label className={styles.field}>
                High
                <input type="number" step="any" value={high} onChange={(e) => setHigh(e.target.value)} required />
              </label>
            </>
          )}
          {kind === "change" && (
            <>
              <label className={styles.field}>
                Direction
                <select value={direction} onChange={(e) => setDirection(e.target.value as typeof direction)}>
                  <option value="decrease">a decrease</option>
                  <option value="increase">an increase</option>
                  <option value="either">either way</option>
                </select>
              </label>
              <label className={styles.field}>
                Of at least
                <input type="number" step="any" min="0" value={amount} onChange={(e) => setAmount(e.target.value)} required />
              </label>
              <label className={styles.field}>
                Measured
                <select value={measure} onChange={(e) => setMeasure(e.target.value as typeof measure)}>
                  <option value="percent">in %</option>
                  <option value="absolute">in the value&apos;s unit</option>
                </select>
              </label>
              <label className={styles.field}>
                Against the previous
                <select value={against} onChange={(e) => setAgainst(e.target.value as typeof against)}>
                  <option value="day">day</option>
                  <option value="week">week</option>
                  <option value="month">month</option>
                </select>
              </label>
            </>
          )}
        </div>
        <div className={styles.row}>
          <label className={styles.field}>
            Check
            <select value={cadence} onChange={(e) => setCadence(e.target.value)}>
              {CADENCES.map((c) => (
                <option key={c.value} value={c.value}>
                  {c.label}
                </option>
              ))}
            </select>
            <span className={styles.hint}>Times are in the organization&apos;s time zone.</span>
          </label>
          <fieldset className={styles.checks}>
            <legend className={styles.hint}>Tell me by</legend>
            <label>
              <input type="checkbox" checked={channels.has("email")} onChange={(e) => setChannels(toggled(channels, "email", e.target.checked))} /> E-mail
            </label>
            <label>
              <input type="checkbox" checked={channels.has("in_app")} onChange={(e) => setChannels(toggled(channels, "in_app", e.target.checked))} /> In the app
            </label>
            <label>
              <input type="checkbox" checked={notifyOnResolved} onChange={(e) => setNotifyOnResolved(e.target.checked)} /> Also when it resolves
            </label>
          </fieldset>
        </div>
        <p className={styles.hint}>
          {filterCount === 0 ? "It runs under the dashboard's default filters." : `It runs under the ${filterCount === 1 ? "filter" : `${filterCount} filters`} set on screen now.`} You are alerted on
          what you may see; each recipient on what they may see.
        </p>
        {message && (
          <p role={message.tone === "error" ? "alert" : "status"} className={message.tone === "error" ? styles.error : styles.success}>
            {message.text} {message.id && <Link href={`/alerts/${encodeURIComponent(message.id)}`}>Open the alert</Link>}
          </p>
        )}
        <div className={styles.actions}>
          <button type="button" className="button" onClick={() => dialog.current?.close()}>
            Close
          </button>
          {!message?.id && (
            <button type="submit" className="button primary" disabled={busy || channels.size === 0 || (!kpi && !column)}>
              {busy ? "Creating…" : "Create alert"}
            </button>
          )}
        </div>
      </form>
    </dialog>
  );
}

function toggled<T>(set: Set<T>, value: T, on: boolean): Set<T> {
  const next = new Set(set);
  if (on) next.add(value);
  else next.delete(value);
  return next;
}
