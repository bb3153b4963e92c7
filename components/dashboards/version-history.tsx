"use client";

import { useEffect, useRef, useState } from "react";
import { diffVersions, listVersions, restoreVersion, type DiffEntry, type VersionSummary } from "@/lib/dashboards/versions-contract";
import { callApi } from "@/components/api-client";
import { useApiRead } from "@/components/api-hooks";
import styles from "./version-history.module.css";
import { formatInstant } from "@/lib/dashboards/format";
import { useOrgTimeZone } from "@/components/org-time-zone";

interface VersionHistoryProps {
  dashboardId: string;
  /** The live version as the page last rendered it: a publish refreshes the page, and a new number reloads the list. */
  publishedVersion: number | null;
}

const SECTION: Record<DiffEntry["section"], string> = { dashboard: "dashboard settings", widgets: "widget", filters: "filter", tabs: "tab", datasets: "dataset" };
const show = (value: unknown) => (value === undefined ? "(none)" : JSON.stringify(value));

/**
 * The editor's History panel: the published versions (who published each, a person or an API key,
 * its message and source commit), the meaning-level diff of a chosen version against the draft,
 * and restoring it as the draft, optionally publishing it again as a new version.
 */
export function VersionHistory({ dashboardId, publishedVersion }: VersionHistoryProps) {
  const versions = useApiRead(listVersions, { params: { id: dashboardId }, query: { limit: 50 } });
  const { mutate: reloadVersions } = versions;
  // Publishing happens in the editor, which refreshes the page; the list is read by the browser, so it follows here.
  const listedForVersion = useRef(publishedVersion);
  useEffect(() => {
    if (listedForVersion.current === publishedVersion) return;
    listedForVersion.current = publishedVersion;
    void reloadVersions();
  }, [publishedVersion, reloadVersions]);
  const [selected, setSelected] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function restore(version: number, publish: boolean) {
    const what = publish ? `Restore version ${version} and publish it as a new version?` : `Restore version ${version} as the draft?`;
    if (!window.confirm(`${what} Unsaved edits in the editor are lost; no version is changed.`)) return;
    setBusy(true);
    setError(null);
    try {
      await callApi(restoreVersion, { params: { id: dashboardId, version }, body: { publish } });
      // The editor holds the draft it loaded: reload so it, the preview and this list show the restored one.
      window.location.reload();
    } catch (failure) {
      setError(`Not restored: ${(failure as Error).message}`);
      setBusy(false);
    }
  }

  const items = versions.data?.items ?? [];
  return (
    <section className={styles.panel} aria-label="History" data-testid="version-history">
      <h2>History</h2>
      {versions.error && <p role="alert">{versions.error.message}</p>}
      {versions.data && items.length === 0 && <p className="muted">Not published yet: each publish adds a version here.</p>}
      {error && <p role="alert">{error}</p>}
      {items.length > 0 && (
        <div className={styles.layout}>
          <ol className={styles.versions}>
            {items.map((v) => (
              <VersionRow key={v.version} version={v} selected={selected === v.version} busy={busy} onDiff={() => setSelected(v.version)} onRestore={(publish) => void restore(v.version, publish)} />
            ))}
          </ol>
          <div>{selected === null ? <p className="muted">Choose a version to see what the draft changes against it.</p> : <VersionDiff dashboardId={dashboardId} version={selected} />}</div>
        </div>
      )}
      {versions.data && versions.data.total > items.length && <p className="muted">The {items.length} newest of {versions.data.total} versions.</p>}
    </section>
  );
}

function VersionRow({ version: v, selected, busy, onDiff, onRestore }: { version: VersionSummary; selected: boolean; busy: boolean; onDiff: () => void; onRestore: (publish: boolean) => void }) {
  // Publishers by name; one no longer in the organization is said so, not shown by its id.
  const who = v.published_by.name ?? (v.published_by.kind === "api_key" ? "a deleted API key" : "a former member");
  const timeZone = useOrgTimeZone();
  return (
    <li className={styles.version} aria-current={selected} data-testid={`version-${v.version}`}>
      <div className={styles.versionHead}>
        <strong>Version {v.version}</strong>
        {v.is_published && <span className="chip good">live</span>}
        {v.restored_from !== null && <span className="chip">restores {v.restored_from}</span>}
        <span className="muted">
          {formatInstant(v.published_at, timeZone)} · {who}
          {v.published_by.kind === "api_key" ? " (API key)" : ""}
        </span>
      </div>
      {v.message && <span className={styles.message}>{v.message}</span>}
      {v.source && (
        <span className="muted">
          {[v.source.repository, v.source.commit?.slice(0, 12), v.source.ref, v.source.path].filter(Boolean).join(" · ")}
          {v.source.run_url && (
            <>
              {" · "}
              <a href={v.source.run_url} rel="noreferrer noopener" target="_blank">
                run
              </a>
            </>
          )}
        </span>
      )}
      <div className={styles.versionButtons}>
        <button type="button" className="button" onClick={onDiff} aria-pressed={selected}>
          Diff with draft
        </button>
        <button type="button" className="button" onClick={() => onRestore(false)} disabled={busy}>
          Restore
        </button>
        <button type="button" className="button" onClick={() => onRestore(true)} disabled={busy}>
          Restore and publish
        </button>
      </div>
    </li>
  );
}

function VersionDiff({ dashboardId, version }: { dashboardId: string; version: number }) {
  const diff = useApiRead(diffVersions, { params: { id: dashboardId, version }, query: { to: "draft" } });
  if (diff.error) return <p role="alert">{diff.error.message}</p>;
  if (!diff.data) return <p className="muted">Comparing…</p>;
  const { entries, summary, unparsed } = diff.data;
  return (
    <div data-testid="version-diff">
      <p>
        <strong>Version {version} → draft:</strong>{" "}
        {entries.length === 0 ? "no changes" : `${summary.added} added, ${summary.removed} removed, ${summary.changed} changed, ${summary.moved} moved`}
        {unparsed && <span className="muted"> (a side does not validate: compared as written)</span>}
      </p>
      <ul className={styles.diff}>
        {entries.map((e) => {
          const what = e.section === "dashboard" ? SECTION.dashboard : `${SECTION[e.section]} ${e.id}`;
          const tone = e.change === "added" ? styles.added : e.change === "removed" ? styles.removed : styles.changed;
          const mark = e.change === "added" ? "+" : e.change === "removed" ? "−" : "~";
          return (
            <li key={`${e.section}:${e.id}`} className={tone}>
              {mark} {what}
              {e.change === "moved" ? " (moved)" : ""}
              {e.fields.map((f) => (
                <div key={f.path} className={styles.field}>
                  {f.path}: {show(f.before)} → {show(f.after)}
                </div>
              ))}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
