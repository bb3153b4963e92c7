"use client";

import { useState } from "react";
import { callApi } from "@/components/api-client";
import { cronInWords, formatInstant } from "@/lib/dashboards/format";
import { deleteReportSchedule, sendReportSchedule, updateReportSchedule, type ReportScheduleView } from "@/lib/reports/schedules-contract";

interface Props {
  schedules: ReportScheduleView[];
  /** Admins may approve the shared scope (addresses, Slack, webhooks). */
  canApprove: boolean;
  /** Show the dashboard column (the admin list; the viewer's dialog is for one dashboard). */
  showDashboard: boolean;
  /** Called after any change, so the owner reads the list again. */
  onChanged: () => void;
}


function audience(s: ReportScheduleView): string {
  const parts = [];
  if (s.user_ids.length > 0) parts.push(`${s.user_ids.length} user${s.user_ids.length === 1 ? "" : "s"}`);
  if (s.addresses.length > 0) parts.push(`${s.addresses.length} address${s.addresses.length === 1 ? "" : "es"}`);
  if (s.group_ids.length > 0) parts.push(`${s.group_ids.length} email group${s.group_ids.length === 1 ? "" : "s"}`);
  for (const channel of s.channels) if (channel !== "email") parts.push(channel);
  return parts.join(", ");
}

/** Report schedules, their cron in words and their last and next run in the schedule's own zone (named), and the actions an editor has on each: pause or resume, send now, approve, delete. */
export function ReportSchedulesTable({ schedules, canApprove, showDashboard, onChanged }: Props) {
  const [message, setMessage] = useState<{ tone: "error" | "success"; text: string } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  async function act(id: string, what: string, run: () => Promise<unknown>) {
    setBusy(id);
    setMessage(null);
    try {
      await run();
      setMessage({ tone: "success", text: what });
      onChanged();
    } catch (error) {
      setMessage({ tone: "error", text: (error as Error).message });
    } finally {
      setBusy(null);
    }
  }

  if (schedules.length === 0) return <p className="empty-state">No report schedules yet.</p>;
  return (
    <>
      <table className="grid-table" data-testid="report-schedules">
        <thead>
          <tr>
            <th scope="col">Report</th>
            {showDashboard && <th scope="col">Dashboard</th>}
            <th scope="col">When</th>
            <th scope="col">To</th>
            <th scope="col">Last run</th>
            <th scope="col">Next run</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {schedules.map((s) => {
            // A group's members outside the organization's users receive the shared scope too.
            const shared = s.addresses.length > 0 || s.group_ids.length > 0 || s.channels.some((c) => c !== "email");
            return (
              <tr key={s.id}>
                <td>
                  {s.name}
                  <div className="muted">{s.formats.join(" + ").toUpperCase()}</div>
                  {/* It renders in its owner's role and scope, also once they are deactivated (docs/security.md). */}
                  <div className="muted" data-testid="schedule-owner">
                    by {s.owner.name ?? s.owner.id} {s.owner.status !== "active" && <span className="chip warn">{s.owner.status}</span>}
                  </div>
                </td>
                {showDashboard && (
                  <td>
                    <a href={`/dashboards/custom/${encodeURIComponent(s.dashboard_slug)}`}>{s.dashboard_name}</a>
                  </td>
                )}
                <td>
                  {cronInWords(s.cron, s.time_zone)}
                  <div className="muted">
                    <code>{s.cron}</code>
                  </div>
                </td>
                <td>
                  {audience(s)}
                  {shared && <div>{s.shared_approved ? <span className="chip good">shared scope approved</span> : <span className="chip warn">awaits admin approval</span>}</div>}
                </td>
                <td>
                  {s.last_run ? (
                    <>
                      <span className={`chip ${s.last_run.status === "error" ? "bad" : s.last_run.status === "sent" ? "good" : "warn"}`}>{s.last_run.status}</span> {formatInstant(s.last_run.scheduled_for, s.time_zone)}
                    </>
                  ) : (
                    "never"
                  )}
                </td>
                <td>{s.paused ? <span className="chip warn">paused</span> : formatInstant(s.next_run_at, s.time_zone)}</td>
                <td>
                  <button type="button" className="button" disabled={busy === s.id} onClick={() => act(s.id, `Queued "${s.name}" to send now`, () => callApi(sendReportSchedule, { params: { id: s.id } }))}>
                    Send now
                  </button>{" "}
                  <button
                    type="button"
                    className="button"
                    disabled={busy === s.id}
                    onClick={() => act(s.id, s.paused ? `Resumed "${s.name}"` : `Paused "${s.name}"`, () => callApi(updateReportSchedule, { params: { id: s.id }, body: { paused: !s.paused } }))}
                  >
                    {s.paused ? "Resume" : "Pause"}
                  </button>{" "}
                  {canApprove && shared && !s.shared_approved && (
                    <>
                      <button type="button" className="button" disabled={busy === s.id} onClick={() => act(s.id, `Approved the shared scope of "${s.name}"`, () => callApi(updateReportSchedule, { params: { id: s.id }, body: { shared_approved: true } }))}>
                        Approve
                      </button>{" "}
                    </>
                  )}
                  <button
                    type="button"
                    className="button danger"
                    disabled={busy === s.id}
                    onClick={() => {
                      if (window.confirm(`Delete the report schedule "${s.name}"?`)) void act(s.id, `Deleted "${s.name}"`, () => callApi(deleteReportSchedule, { params: { id: s.id } }));
                    }}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {message && (
        <p role="status" className={message.tone === "error" ? "error-box" : "muted"}>
          {message.text}
        </p>
      )}
    </>
  );
}
