"use client";

import { useState } from "react";
import { channelLabel } from "@/lib/notifications/channel-kinds";
import { putQuietHours } from "@/lib/notifications/contract";
import { callApi } from "@/components/api-client";
import { attempt } from "./api";
import styles from "./notifications.module.css";

export interface QuietWindow {
  start: string;
  end: string;
  action: "defer" | "skip";
}
export interface QuietHours {
  time_zone: string;
  org: QuietWindow | null;
  channels: Record<string, QuietWindow | null>;
}

const OFF: QuietWindow = { start: "22:00", end: "07:00", action: "defer" };

function WindowRow({ label, value, onChange }: { label: string; value: QuietWindow | null; onChange: (w: QuietWindow | null) => void }) {
  const id = label.replace(/\W+/g, "-").toLowerCase();
  return (
    <tr>
      <td>
        <label className={`${styles.check} ${styles.flush}`}>
          <input type="checkbox" checked={value !== null} onChange={(e) => onChange(e.target.checked ? OFF : null)} aria-label={`Quiet hours for ${label}`} /> {label}
        </label>
      </td>
      {value ? (
        <>
          <td><input aria-label={`${label} from`} id={`${id}-start`} type="time" value={value.start} onChange={(e) => onChange({ ...value, start: e.target.value })} /></td>
          <td><input aria-label={`${label} until`} id={`${id}-end`} type="time" value={value.end} onChange={(e) => onChange({ ...value, end: e.target.value })} /></td>
          <td>
            <select aria-label={`${label} action`} value={value.action} onChange={(e) => onChange({ ...value, action: e.target.value === "skip" ? "skip" : "defer" })}>
              <option value="defer">hold until the end</option>
              <option value="skip">skip (record why)</option>
            </select>
          </td>
        </>
      ) : (
        <td colSpan={3} className="muted">{label === "Whole organization" ? "No quiet hours" : "Follows the organization"}</td>
      )}
    </tr>
  );
}

/** Quiet hours for the organization and per channel, in the organization's time zone. */
export function QuietHoursEditor({ initial, onSaved }: { initial: QuietHours; onSaved: () => void }) {
  const [org, setOrg] = useState(initial.org);
  const [channels, setChannels] = useState(initial.channels);
  const [status, setStatus] = useState<{ ok: boolean; text: string } | null>(null);

  async function save() {
    const res = await attempt(() => callApi(putQuietHours, { body: { org, channels } }));
    if (!res.ok) return setStatus({ ok: false, text: res.error });
    setStatus({ ok: true, text: "Saved." });
    onSaved();
  }

  return (
    <div>
      <p className="muted">Times are local to the organization ({initial.time_zone}). A channel&apos;s own window replaces the organization&apos;s for that channel.</p>
      <div className={styles.scroll}>
        <table className="grid-table">
          <thead><tr><th>Applies to</th><th>From</th><th>Until</th><th>During quiet hours</th></tr></thead>
          <tbody>
            <WindowRow label="Whole organization" value={org} onChange={setOrg} />
            {Object.keys(channels).map((kind) => (
              <WindowRow key={kind} label={channelLabel(kind)} value={channels[kind]} onChange={(w) => setChannels((c) => ({ ...c, [kind]: w }))} />
            ))}
          </tbody>
        </table>
      </div>
      <div className={`${styles.row} ${styles.below}`}>
        <button className="button primary" type="button" onClick={() => void save()}>Save quiet hours</button>
        {status && <span role="status" className={`${styles.result} ${status.ok ? styles.ok : styles.failed}`}>{status.text}</span>}
      </div>
    </div>
  );
}
