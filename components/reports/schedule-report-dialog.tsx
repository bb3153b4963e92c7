"use client";

import { useEffect, useRef, useState, type FormEvent } from "react";
import { useSearchParams } from "next/navigation";
import { callApi } from "@/components/api-client";
import { useApiRead } from "@/components/api-hooks";
import { cronInWords, formatInstant } from "@/lib/dashboards/format";
import { useOrgTimeZone } from "@/components/org-time-zone";
import { FILTER_PARAM_PREFIX, decodeFilterValue } from "@/lib/dashboards/wiring";
import { createReportSchedule, listReportEmailGroups, listReportSchedules } from "@/lib/reports/schedules-contract";
import { ReportSchedulesTable } from "./report-schedules-table";
import styles from "./reports.module.css";

interface Props {
  dashboardId: string;
  published: boolean;
  filterWidgets: { id: string; name: string; control: string }[];
}

const DATE_CONTROLS = new Set(["date", "date_range", "calendar"]);

const PRESETS = [
  { cron: "0 8 * * 1", label: "Every Monday at 08:00" },
  { cron: "0 8 * * *", label: "Every day at 08:00" },
  { cron: "0 8 * * 1-5", label: "Weekdays at 08:00" },
  { cron: "0 8 1 * *", label: "The 1st of each month at 08:00" },
  { cron: "", label: "Custom cron expression…" },
];


/**
 * "Schedule report" in the viewer: a new schedule for this dashboard (when, format, filter values, who) and the
 * dashboard's schedules with last and next run. The filter values start as those on screen when it opens. Recipients are e-mail addresses: an organization user's address
 * receives the report in that user's own scope; other addresses, Slack and webhooks get the shared scope once an
 * admin approves it (on the admin page, /admin/reports).
 */
export function ScheduleReportDialog({ dashboardId, published, filterWidgets }: Props) {
  const search = useSearchParams();
  const dialog = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [preset, setPreset] = useState(PRESETS[0].cron);
  const [cron, setCron] = useState(PRESETS[0].cron);
  // A new schedule runs in the organization's zone unless the editor picks another (what the API defaults to as well).
  const orgTimeZone = useOrgTimeZone();
  const [timeZone, setTimeZone] = useState("");
  const [formats, setFormats] = useState<Set<"pdf" | "png">>(new Set(["pdf"]));
  const [channels, setChannels] = useState<Set<"email" | "slack" | "webhook">>(new Set(["email"]));
  const [recipients, setRecipients] = useState("");
  const [groups, setGroups] = useState<Set<string>>(new Set());
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [paper, setPaper] = useState<"a4" | "letter">("a4");
  const [orientation, setOrientation] = useState<"portrait" | "landscape">("portrait");
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ tone: "error" | "success"; text: string } | null>(null);
  /** Bumped after each new schedule, so the list below reads again. */
  const [made, setMade] = useState(0);

  const toggle = <T,>(set: Set<T>, value: T, on: boolean) => {
    const next = new Set(set);
    if (on) next.add(value);
    else next.delete(value);
    return next;
  };

  function show() {
    setTimeZone((z) => z || orgTimeZone);
    // The filters on screen, as the page's URL holds them (text as typed, anything else JSON: what the boxes below take).
    setFilters(Object.fromEntries(filterWidgets.flatMap((f) => (search.has(FILTER_PARAM_PREFIX + f.id) ? [[f.id, search.get(FILTER_PARAM_PREFIX + f.id)!]] : []))));
    setOpen(true);
    dialog.current?.showModal();
  }

  async function create(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setMessage(null);
    try {
      const body = {
        dashboard_id: dashboardId,
        name: name.trim(),
        cron: preset || cron,
        time_zone: timeZone,
        formats: [...formats],
        filters: Object.fromEntries(Object.entries(filters).filter(([, v]) => v.trim() !== "").map(([id, v]) => [id, decodeFilterValue(v.trim())])),
        paper,
        orientation,
        channels: [...channels],
        addresses: recipients.split(/[\s,;]+/).filter(Boolean),
        group_ids: [...groups],
      };
      const made = await callApi(createReportSchedule, { body });
      setMessage({ tone: "success", text: `Scheduled "${made.name}"; ${cronInWords(made.cron, made.time_zone).replace(/^./, (c) => c.toLowerCase())}; next run ${formatInstant(made.next_run_at, made.time_zone)}` });
      setName("");
      setMade((n) => n + 1);
    } catch (error) {
      setMessage({ tone: "error", text: `Not scheduled: ${(error as Error).message}` });
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <button type="button" className="button" onClick={show}>
        Schedule report
      </button>
      <dialog ref={dialog} className={styles.dialog} aria-labelledby="schedule-report-title" onClose={() => setOpen(false)}>
        <form className={styles.body} onSubmit={create}>
          <h2 id="schedule-report-title">Schedule a report of this dashboard</h2>
          {!published ? (
            <p className={styles.error} role="alert">
              Publish the dashboard first: reports always show the published version.
            </p>
          ) : (
            <>
              <div className={styles.row}>
                <label className={styles.field}>
                  <span>Name</span>
                  <input name="name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} placeholder="Weekly sales" />
                </label>
                <label className={styles.field}>
                  <span>When</span>
                  <select name="preset" value={preset} onChange={(e) => setPreset(e.target.value)}>
                    {PRESETS.map((p) => (
                      <option key={p.label} value={p.cron}>
                        {p.label}
                      </option>
                    ))}
                  </select>
                </label>
                {preset === "" && (
                  <label className={styles.field}>
                    <span>Cron (minute hour day month weekday)</span>
                    <input name="cron" required value={cron} onChange={(e) => setCron(e.target.value)} aria-describedby="schedule-cron-words" />
                    <span id="schedule-cron-words" className={styles.hint}>
                      {cronInWords(cron, timeZone || "your time zone")}
                    </span>
                  </label>
                )}
                <label className={styles.field}>
                  <span>Time zone</span>
                  <input name="time_zone" required value={timeZone} onChange={(e) => setTimeZone(e.target.value)} placeholder="Europe/Berlin" />
                </label>
              </div>
              <div className={styles.row}>
                <fieldset className={styles.checks}>
                  <legend className={styles.hint}>Formats</legend>
                  {(["pdf", "png"] as const).map((f) => (
                    <label key={f}>
                      <input type="checkbox" name={`format-${f}`} checked={formats.has(f)} onChange={(e) => setFormats((s) => toggle(s, f, e.target.checked))} /> {f.toUpperCase()}
                    </label>
                  ))}
                </fieldset>
                <fieldset className={styles.checks}>
                  <legend className={styles.hint}>Channels</legend>
                  {(["email", "slack", "webhook"] as const).map((c) => (
                    <label key={c}>
                      <input type="checkbox" name={`channel-${c}`} checked={channels.has(c)} onChange={(e) => setChannels((s) => toggle(s, c, e.target.checked))} /> {c === "email" ? "E-mail (file attached)" : c === "slack" ? "Slack" : "Webhook"}
                    </label>
                  ))}
                </fieldset>
                <label className={styles.field}>
                  <span>PDF paper</span>
                  <select value={paper} onChange={(e) => setPaper(e.target.value as "a4" | "letter")}>
                    <option value="a4">A4</option>
                    <option value="letter">Letter</option>
                  </select>
                </label>
                <label className={styles.field}>
                  <span>Orientation</span>
                  <select value={orientation} onChange={(e) => setOrientation(e.target.value as "portrait" | "landscape")}>
                    <option value="portrait">Portrait</option>
                    <option value="landscape">Landscape</option>
                  </select>
                </label>
              </div>
              <label className={styles.field}>
                <span>Recipients (e-mail addresses)</span>
                <textarea name="recipients" rows={2} value={recipients} onChange={(e) => setRecipients(e.target.value)} placeholder="gm@acme.test, partner@example.com" />
                <span className={styles.hint}>
                  Colleagues each receive the report in their own role and locations. Other addresses (only in the domains your admins allow), Slack and webhooks receive your
                  scope once an admin approves it.
                </span>
              </label>
              {open && <EmailGroups chosen={groups} onToggle={(id, on) => setGroups((g) => toggle(g, id, on))} />}
              {filterWidgets.length > 0 && (
                <fieldset className={styles.row} style={{ border: "none", padding: 0, margin: 0 }}>
                  <legend className={styles.hint}>Filter values (empty: the filter&apos;s default)</legend>
                  {filterWidgets.map((f) => (
                    <label key={f.id} className={styles.field}>
                      <span>{f.name}</span>
                      <input
                        name={`filter-${f.id}`}
                        placeholder={DATE_CONTROLS.has(f.control) ? "e.g. last month" : 'a value, or a JSON list such as ["loc_acme_nyc"]'}
                        value={filters[f.id] ?? ""}
                        onChange={(e) => setFilters((v) => ({ ...v, [f.id]: e.target.value }))}
                      />
                    </label>
                  ))}
                </fieldset>
              )}
            </>
          )}
          {message && (
            <p role="status" className={message.tone === "error" ? styles.error : styles.success}>
              {message.text}
            </p>
          )}
          <div className={styles.actions}>
            <a className="button" href="/admin/reports">
              All schedules
            </a>
            <button type="button" className="button" onClick={() => dialog.current?.close()}>
              Close
            </button>
            {published && (
              <button type="submit" className="button primary" disabled={busy}>
                {busy ? "Scheduling…" : "Schedule"}
              </button>
            )}
          </div>
          <h3>Schedules of this dashboard</h3>
          {open && <DashboardSchedules dashboardId={dashboardId} made={made} />}
        </form>
      </dialog>
    </>
  );
}

/** The dashboard's schedules, read while the dialog is open (mounted with it) and again after each new one. */
function DashboardSchedules({ dashboardId, made }: { dashboardId: string; made: number }) {
  const list = useApiRead(listReportSchedules, { query: { dashboard_id: dashboardId, limit: 200, offset: 0 } });
  const { mutate } = list;
  useEffect(() => {
    if (made > 0) void mutate();
  }, [made, mutate]);
  if (list.error) return <p className={styles.error}>{list.error.message}</p>;
  return <ReportSchedulesTable schedules={list.data?.items ?? []} canApprove={false} showDashboard={false} onChanged={() => void mutate()} />;
}

/**
 * The organization's email groups as checkboxes (read while the dialog is open). Their members are read at each run:
 * colleagues among them get their own scope, other addresses the shared scope, as recipients typed above.
 */
function EmailGroups({ chosen, onToggle }: { chosen: ReadonlySet<string>; onToggle: (id: string, on: boolean) => void }) {
  const list = useApiRead(listReportEmailGroups, { query: { limit: 200, offset: 0 } });
  if (list.error) return <p className={styles.error}>{list.error.message}</p>;
  const items = list.data?.items ?? [];
  if (items.length === 0) return null;
  return (
    <fieldset className={styles.checks}>
      <legend className={styles.hint}>Email groups (members as of each run)</legend>
      {items.map((g) => (
        <label key={g.id}>
          <input type="checkbox" name={`group-${g.id}`} checked={chosen.has(g.id)} onChange={(e) => onToggle(g.id, e.target.checked)} /> {g.group_name} ({g.member_count})
        </label>
      ))}
    </fieldset>
  );
}
