import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { getMetricSeries, listMetrics } from "@/lib/dashboards/metrics-operations";
import { invoke } from "@/lib/operation";
import { PAGE_LIMIT_MAX } from "@/lib/pagination";
import { MetricsCatalog } from "@/components/metrics/metrics-catalog";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Metrics" };

export default async function MetricsPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  const metrics = await invoke(listMetrics, principal, { query: { limit: PAGE_LIMIT_MAX, offset: 0 } });
  // One small chart per metric, each one query through the engine in the viewer's scope.
  const series = [];
  for (const m of metrics.items) series.push(await invoke(getMetricSeries, principal, { params: { dataset: m.dataset, metric: m.id } }));
  return (
    <div className="page">
      <h1>Metrics</h1>
      <p className="muted">
        Every metric of the organization&apos;s shared datasets (<code>kind: dataset</code>): one definition, read by the dashboards listed beside it. An admin
        certifies a definition; a push that changes it removes the mark.
      </p>
      <MetricsCatalog metrics={metrics.items} series={series} mayCertify={principal.role === "admin"} />
      {metrics.total > metrics.items.length && (
        <p className="muted">
          Showing the first {metrics.items.length} of {metrics.total}.
        </p>
      )}
    </div>
  );
}
