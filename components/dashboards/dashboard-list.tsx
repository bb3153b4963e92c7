"use client";

import Link from "next/link";
import type { listDashboards } from "@/lib/dashboards/contract";
import type { ResponseOf } from "@/components/api-client";
import { useDashboards } from "@/components/api-hooks";
import { PageNote } from "@/components/page-note";
import styles from "./dashboards.module.css";
import { formatInstant } from "@/lib/dashboards/format";
import { useOrgTimeZone } from "@/components/org-time-zone";

/** Thumbnail cells (columns of 12, rows of 7 px) per data component: a sketch of what the dashboard holds. */
const THUMB_SPANS: Record<string, [number, number]> = { kpi: [3, 2], echarts: [6, 4], table: [6, 4], tabulator: [12, 3] };

/** The dashboards the caller may see, as cards; starts from the server render and revalidates (on focus, after edits elsewhere). */
export function DashboardList({ initial, editor }: { initial: ResponseOf<typeof listDashboards>; editor: boolean }) {
  const page = useDashboards(initial).data ?? initial;
  const timeZone = useOrgTimeZone();
  const { items } = page;
  return (
    <>
      {items.length === 0 ? (
        <div className={styles.emptyList} data-testid="dashboards-empty">
          <h2>No dashboards yet</h2>
          <p className="muted">
            {editor ? "Create one from a manifest, or load the sample sales dashboard to see what a dashboard can do." : "Nothing has been published for your role yet. Ask an admin to publish a dashboard."}
          </p>
        </div>
      ) : (
        <ul className={styles.list} style={{ listStyle: "none", padding: 0 }} aria-label="Dashboards">
          {items.map((d) => {
            const dataWidgets = d.widgets.filter((w) => !["text", "image", "markdown", "filter"].includes(w.component)).length;
            return (
              <li key={d.id}>
                <Link href={`/dashboards/custom/${d.slug}`} className={styles.listCard} data-testid="dashboard-card" data-slug={d.slug}>
                  <div className={styles.thumb} aria-hidden="true">
                    {d.widgets
                      .filter((w) => w.component in THUMB_SPANS)
                      .slice(0, 16)
                      .map((w) => (
                        <span key={w.id} style={{ gridColumn: `span ${THUMB_SPANS[w.component][0]}`, gridRow: `span ${THUMB_SPANS[w.component][1]}` }} />
                      ))}
                  </div>
                  <h2>{d.name}</h2>
                  <div className={styles.listMeta}>
                    <span className={`chip ${d.status === "published" ? "good" : styles.statusDraft}`}>{d.status}</span>
                    {editor && d.status === "published" && d.has_unpublished_changes && <span>unpublished changes</span>}
                    <span>
                      {d.widgets.length} widgets · {dataWidgets} with data · {d.tabs.length || 1} {d.tabs.length === 1 || d.tabs.length === 0 ? "tab" : "tabs"}
                    </span>
                  </div>
                  <div className={styles.listMeta}>
                    <span>Updated {formatInstant(d.updated_at, timeZone)}</span>
                  </div>
                </Link>
              </li>
            );
          })}
        </ul>
      )}
      <PageNote page={page} what="dashboards" />
    </>
  );
}
