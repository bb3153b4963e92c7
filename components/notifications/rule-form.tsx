"use client";

import { useState } from "react";
import type { z } from "zod";
import { channelLabel, type ChannelKind } from "@/lib/notifications/channel-kinds";
import { createRule, Severity, type BaseRuleView } from "@/lib/notifications/contract";
import { callApi } from "@/components/api-client";
import { cronInWords } from "@/lib/dashboards/format";
import { attempt } from "./api";
import styles from "./notifications.module.css";

export type BaseRule = z.output<typeof BaseRuleView>;

interface ThresholdSpec {
  name: string;
  description: string;
  default: string;
}

function thresholdSpecs(base: BaseRule | undefined): ThresholdSpec[] {
  const props = (base?.thresholds.properties ?? {}) as Record<string, { description?: string; default?: unknown }>;
  return Object.entries(props).map(([name, p]) => ({ name, description: p.description ?? "", default: p.default === undefined ? "" : String(p.default) }));
}

interface Props {
  baseRules: BaseRule[];
  usableChannels: ChannelKind[];
  onCreated: (key: string) => void;
  onCancel: () => void;
}

/** Clones a base rule into a custom rule (SPEC §2.8): thresholds from the base rule's declared parameters, usable channels only. */
export function RuleForm({ baseRules, usableChannels, onCreated, onCancel }: Props) {
  const [baseKey, setBaseKey] = useState(baseRules[0]?.key ?? "");
  const base = baseRules.find((b) => b.key === baseKey);
  const specs = thresholdSpecs(base);
  const [key, setKey] = useState(`${baseRules[0]?.key ?? "rule"}.custom`);
  const [name, setName] = useState(baseRules[0]?.name ?? "");
  const [description, setDescription] = useState("");
  const [severity, setSeverity] = useState(baseRules[0]?.default_severity ?? "warning");
  const [cron, setCron] = useState(baseRules[0]?.default_cron ?? "*/15 * * * *");
  const [channels, setChannels] = useState<ChannelKind[]>(["in_app"]);
  const [thresholds, setThresholds] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  function pickBase(next: string) {
    const b = baseRules.find((r) => r.key === next);
    setBaseKey(next);
    setThresholds({});
    if (b) {
      setKey(`${b.key}.custom`);
      setName(b.name);
      setSeverity(b.default_severity);
      setCron(b.default_cron);
    }
  }

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    setBusy(true);
    const values = Object.fromEntries(specs.filter((s) => (thresholds[s.name] ?? "") !== "").map((s) => [s.name, Number(thresholds[s.name])]));
    const body = { kind: "clone" as const, key, name, description, base_rule_key: baseKey, thresholds: values, severity, default_channels: channels, cadence_cron: cron };
    const res = await attempt(() => callApi(createRule, { body }));
    setBusy(false);
    if (!res.ok) return setError(res.error);
    onCreated(res.data.key);
  }

  return (
    <form className={styles.editor} onSubmit={(e) => void submit(e)} aria-label="New rule">
      <div className={styles.fields}>
        <div className="field">
          <label htmlFor="rule-base">Base rule</label>
          <select id="rule-base" value={baseKey} onChange={(e) => pickBase(e.target.value)}>
            {baseRules.map((b) => <option key={b.key} value={b.key}>{b.name} ({b.key})</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor="rule-key">Key</label>
          <input id="rule-key" value={key} onChange={(e) => setKey(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="rule-name">Name</label>
          <input id="rule-name" value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="rule-severity">Severity</label>
          <select id="rule-severity" value={severity} onChange={(e) => setSeverity(Severity.parse(e.target.value))}>
            {Severity.options.map((s) => <option key={s}>{s}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor="rule-cron">Cadence (cron, UTC)</label>
          <input id="rule-cron" value={cron} onChange={(e) => setCron(e.target.value)} aria-describedby="rule-cron-words" />
          <span id="rule-cron-words" className={styles.hint}>{cronInWords(cron, "UTC")}</span>
        </div>
        {specs.map((s) => (
          <div key={s.name} className="field">
            <label htmlFor={`rule-t-${s.name}`}>{s.name}</label>
            <input id={`rule-t-${s.name}`} type="number" step="any" placeholder={s.default ? `default ${s.default}` : undefined} aria-describedby={`rule-t-${s.name}-hint`} value={thresholds[s.name] ?? ""} onChange={(e) => setThresholds((t) => ({ ...t, [s.name]: e.target.value }))} />
            <span id={`rule-t-${s.name}-hint`} className={styles.hint}>{s.description}</span>
          </div>
        ))}
      </div>
      {base && <p className="muted">{base.description}</p>}
      <div className="field">
        <label htmlFor="rule-description">Description</label>
        <input id="rule-description" value={description} onChange={(e) => setDescription(e.target.value)} />
      </div>
      <fieldset className={styles.channels}>
        <legend>Channels</legend>
        {usableChannels.map((c) => (
          <label key={c} className={styles.check}>
            <input type="checkbox" value={c} checked={channels.includes(c)} onChange={(e) => setChannels((list) => (e.target.checked ? [...list, c] : list.filter((x) => x !== c)))} /> {channelLabel(c)}
          </label>
        ))}
      </fieldset>
      {error && <p className="error-box" role="alert">{error}</p>}
      <div className={styles.row}>
        <button className="button primary" type="submit" disabled={busy}>{busy ? "Creating…" : "Create rule"}</button>
        <button className="button" type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
