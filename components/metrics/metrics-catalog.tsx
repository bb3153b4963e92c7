import Link from "next/link";
import type { CatalogMetric, MetricSeries } from "@/lib/datasets/contract";
import { formatNumber } from "@/lib/dashboards/format";
import { CertifyButton } from "./certify-button";
import styles from "./metrics.module.css";

/** A metric's values as a small line (SVG, drawn on the server); the figures are in its accessible name. */
function Sparkline({ series, label }: { series: MetricSeries; label: string }) {
  const values = series.points.map((p) => p.value).filter((v): v is number => v !== null);
  if (series.error) return <span className={styles.hint}>{series.error}</span>;
  if (values.length === 0) return <span className={styles.hint}>no data</span>;
  const [w, h] = [160, 36];
  const min = Math.min(...values);
  const span = Math.max(...values) - min || 1;
  const step = series.points.length > 1 ? w / (series.points.length - 1) : 0;
  const path = series.points
    .map((p, i) => (p.value === null ? null : `${i * step},${h - 2 - ((p.value - min) / span) * (h - 4)}`))
    .filter(Boolean)
    .join(" ");
  const description = `${label} by ${series.dimension ?? "total"}: ${series.points.map((p) => `${p.label} ${p.value === null ? "none" : formatNumber(p.value)}`).join(", ")}`;
  return (
    <svg className={styles.spark} width={w} height={h} viewBox={`0 0 ${w} ${h}`} role="img" aria-label={description}>
      <title>{description}</title>
      {series.points.length > 1 ? <polyline points={path} fill="none" stroke="currentColor" strokeWidth="2" /> : <circle cx={w / 2} cy={h / 2} r="3" fill="currentColor" />}
    </svg>
  );
}

/** The metrics catalog as a table: definition, owner, certification, uses and a small chart per metric. */
export function MetricsCatalog({ metrics, series, mayCertify }: { metrics: readonly CatalogMetric[]; series: readonly MetricSeries[]; mayCertify: boolean }) {
  if (metrics.length === 0) {
    return (
      <p className="muted" data-testid="metrics-empty">
        No shared datasets yet. Push a <code>kind: dataset</code> manifest with <code>quarry push</code> and name it from a dashboard with <code>{"{ ref: <id> }"}</code>.
      </p>
    );
  }
  return (
    <table className={styles.table} data-testid="metrics-catalog">
      <thead>
        <tr>
          <th scope="col">Metric</th>
          <th scope="col">Definition</th>
          <th scope="col">Owner</th>
          <th scope="col">Used by</th>
          <th scope="col">Certification</th>
          <th scope="col">Values</th>
        </tr>
      </thead>
      <tbody>
        {metrics.map((m, i) => {
          const label = m.label ?? m.id;
          return (
            <tr key={`${m.dataset}:${m.id}`} data-metric={`${m.dataset}.${m.id}`}>
              <th scope="row">
                {label}
                <div className={styles.hint}>
                  {m.dataset}.{m.id}
                  {m.aliases.length > 0 && ` (was ${m.aliases.join(", ")})`}
                </div>
              </th>
              <td>
                <code>{m.expression}</code>
                <div className={styles.hint}>
                  {m.type} over {m.source ?? "demo data"} · version {m.dataset_version}
                </div>
              </td>
              <td>{m.owner ?? <span className={styles.hint}>none</span>}</td>
              <td>
                {m.used_by.length === 0 ? (
                  <span className={styles.hint}>unused</span>
                ) : (
                  <ul className={styles.uses}>
                    {m.used_by.map((u) => (
                      <li key={`${u.dashboard}:${u.widget}`}>
                        <Link href={`/dashboards/custom/${encodeURIComponent(u.dashboard)}`}>{u.dashboard_name}</Link> · {u.widget}
                        {!u.published && <span className={styles.hint}> (draft)</span>}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
              <td>
                <span className={styles.state} data-certified={m.certification ? "yes" : "no"}>
                  {m.certification ? `Certified ${m.certification.at.slice(0, 10)}` : "Not certified"}
                </span>
                {mayCertify && <CertifyButton dataset={m.dataset} metric={m.id} certified={m.certification !== null} label={label} />}
              </td>
              <td>
                <Sparkline series={series[i]} label={label} />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
