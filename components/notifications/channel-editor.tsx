"use client";

import { useState } from "react";
import { channelLabel } from "@/lib/notifications/channel-kinds";
import { putChannelConfig } from "@/lib/notifications/contract";
import { callApi } from "@/components/api-client";
import { attempt } from "./api";
import styles from "./notifications.module.css";

type Kind = "email" | "slack" | "webhook" | "in_app";

interface Field {
  name: string;
  label: string;
  type: "text" | "number" | "checkbox" | "password" | "select";
  options?: string[];
  /** Only shown when another field has this value (slack's two modes). */
  when?: [string, string];
  hint?: string;
}

const FIELDS: Record<Kind, Field[]> = {
  email: [
    { name: "host", label: "SMTP host", type: "text" },
    { name: "port", label: "Port", type: "number" },
    { name: "secure", label: "TLS from the first byte (port 465)", type: "checkbox" },
    { name: "user", label: "User", type: "text" },
    { name: "password", label: "Password", type: "password" },
    { name: "from", label: "From address", type: "text" },
  ],
  slack: [
    { name: "mode", label: "Mode", type: "select", options: ["webhook", "bot"] },
    { name: "webhook_url", label: "Incoming webhook URL", type: "password", when: ["mode", "webhook"], hint: "https://hooks.slack.com/services/…" },
    { name: "bot_token", label: "Bot token", type: "password", when: ["mode", "bot"], hint: "xoxb-…" },
    { name: "channel", label: "Channel", type: "text", when: ["mode", "bot"], hint: "#alerts" },
  ],
  webhook: [
    { name: "url", label: "URL", type: "text", hint: "https://…" },
    { name: "signing_secret", label: "Signing secret (16+ characters)", type: "password" },
  ],
  in_app: [],
};

type Values = Record<string, string | boolean>;

function initial(kind: Kind, config: Record<string, unknown>): Values {
  const values: Values = kind === "email" ? { port: "587", secure: false } : kind === "slack" ? { mode: "webhook" } : {};
  for (const field of FIELDS[kind]) {
    const v = config[field.name];
    // Secrets come back masked: the field starts empty and empty keeps the stored value.
    if (field.type === "password" || v === undefined || v === null) continue;
    values[field.name] = typeof v === "boolean" ? v : String(v);
  }
  return values;
}

function toConfig(kind: Kind, values: Values): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const field of FIELDS[kind]) {
    if (field.when && values[field.when[0]] !== field.when[1]) continue;
    const v = values[field.name];
    if (field.type === "checkbox") config[field.name] = v === true;
    else if (typeof v === "string" && v.trim() !== "") config[field.name] = field.type === "number" ? Number(v) : v.trim();
  }
  return config;
}

interface Props {
  kind: Kind;
  enabled: boolean;
  configured: boolean;
  config: Record<string, unknown>;
  onSaved: () => void;
  onCancel: () => void;
}

/** The provider form of one channel kind; secret fields are write-only (left empty, the stored secret is kept). */
export function ChannelEditor({ kind, enabled, configured, config, onSaved, onCancel }: Props) {
  const [values, setValues] = useState<Values>(() => initial(kind, config));
  const [on, setOn] = useState(configured ? enabled : true);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function save(event: React.FormEvent) {
    event.preventDefault();
    setBusy(true);
    const res = await attempt(() => callApi(putChannelConfig, { params: { kind }, body: { enabled: on, config: toConfig(kind, values) } }));
    setBusy(false);
    if (!res.ok) return setError(res.error);
    setError(null);
    onSaved();
  }

  return (
    <form className={styles.editor} onSubmit={(e) => void save(e)} aria-label={`Configure ${channelLabel(kind)}`}>
      <label className={styles.check}>
        <input type="checkbox" checked={on} onChange={(e) => setOn(e.target.checked)} /> Enabled
      </label>
      {kind === "in_app" && <p className="muted">In-app notifications need no provider: they land in the bell of each admin.</p>}
      {config.demo_outbox === true && <p className="muted">This channel is the demo outbox now: its messages are kept on this page and never sent. Saving a real provider replaces it.</p>}
      <div className={styles.fields}>
        {FIELDS[kind]
          .filter((f) => !f.when || values[f.when[0]] === f.when[1])
          .map((f) => {
            const id = `${kind}-${f.name}`;
            const secret = f.type === "password";
            if (f.type === "checkbox") {
              return (
                <label key={f.name} className={styles.check}>
                  <input id={id} type="checkbox" checked={values[f.name] === true} onChange={(e) => setValues((v) => ({ ...v, [f.name]: e.target.checked }))} /> {f.label}
                </label>
              );
            }
            return (
              <div key={f.name} className="field">
                <label htmlFor={id}>{f.label}</label>
                {f.type === "select" ? (
                  <select id={id} value={String(values[f.name] ?? "")} onChange={(e) => setValues((v) => ({ ...v, [f.name]: e.target.value }))}>
                    {f.options?.map((o) => <option key={o}>{o}</option>)}
                  </select>
                ) : (
                  <input
                    id={id}
                    type={f.type}
                    autoComplete={secret ? "new-password" : "off"}
                    value={String(values[f.name] ?? "")}
                    placeholder={secret && configured && config[f.name] ? `${String(config[f.name])} (leave empty to keep)` : f.hint}
                    onChange={(e) => setValues((v) => ({ ...v, [f.name]: e.target.value }))}
                  />
                )}
              </div>
            );
          })}
      </div>
      {error && <p className="error-box" role="alert">{error}</p>}
      <div className={styles.row}>
        <button className="button primary" type="submit" disabled={busy}>{busy ? "Saving…" : "Save"}</button>
        <button className="button" type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
