"use client";

import { useState } from "react";
import { testChannel, type listChannelConfigs } from "@/lib/notifications/contract";
import { callApi, type ResponseOf } from "@/components/api-client";
import { channelLabel } from "@/lib/notifications/channel-kinds";
import { useWhen } from "../api";
import { ChannelEditor } from "../channel-editor";
import styles from "../notifications.module.css";
import { type Flash, Result, Table, useActions } from "./parts";

type Channel = ResponseOf<typeof listChannelConfigs>["items"][number];

export function ChannelsSection({ channels, refresh }: { channels: Channel[]; refresh: () => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  const { flash, act } = useActions(refresh);
  return (
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
              flash={flash(`test:${c.kind}`)}
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
  );
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
  const when = useWhen();
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
