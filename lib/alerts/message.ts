import "server-only";
import { config } from "@/lib/config";
import type { ColumnFormats } from "@/lib/dashboards/column-formats";
import { formatNumber, humanize } from "@/lib/dashboards/format";
import { withFilterParam } from "@/lib/dashboards/wiring";
import type { WidgetManifest } from "@/lib/manifest/schema";
import type { AlertCondition, AlertMessageKind } from "./contract";
import { PERIOD_NAME, conditionWords, figureFormat } from "./words";

/**
 * What an alert message says (issue 45 §4): the widget, the value, the threshold and the change, each figure in the
 * format the dashboard declares for the watched column (currency on money, a KPI tile's prefix and suffix as its
 * unit), and the link to the dashboard under the alert's filters. Pure: the delivery step (delivery.ts) reads the
 * rows and the published manifest and hands them in; the picture is drawn there, per recipient scope.
 */

export interface AlertFinding {
  alertId: string;
  alertName: string;
  kind: AlertMessageKind;
  condition: AlertCondition;
  dashboard: { name: string; slug: string };
  widget: WidgetManifest;
  /** The watched column (a KPI's value column when the alert names none). */
  column: string;
  formats: ColumnFormats;
  filters: Record<string, unknown>;
  /** The `per` dimension and its value, for an alert per dimension value. */
  dimension: { column: string; value: string } | null;
  value: number | null;
  previousValue: number | null;
  change: number | null;
  /** Whose data the figures are ("general manager, locations loc_a, loc_b"). */
  scope: string;
}

export interface AlertText {
  subject: string;
  body: string;
  /** The dashboard under the alert's filters. */
  dashboardLink: string;
  /** The alert's page (history, snooze, mute). */
  alertLink: string;
}

/** The dashboard's page with the alert's filters set, as the viewer writes them in its URL (`f.<filter id>`). */
export function dashboardLink(slug: string, filters: Record<string, unknown>): string {
  let search = "";
  for (const [id, value] of Object.entries(filters).sort(([a], [b]) => a.localeCompare(b))) search = withFilterParam(search, id, value);
  return `${config().publicUrl}/dashboards/custom/${encodeURIComponent(slug)}${search}`;
}

export const alertPageLink = (alertId: string) => `${config().publicUrl}/alerts/${encodeURIComponent(alertId)}`;

/** The change against the previous period in words: "down 12.5% from $8,000.00 the previous week". */
function changeWords(f: AlertFinding, figure: (value: number) => string): string {
  if (f.condition.kind !== "change" || f.change === null || f.previousValue === null) return "";
  const direction = f.change > 0 ? "up" : f.change < 0 ? "down" : "unchanged";
  const amount = f.condition.measure === "percent" ? `${formatNumber(Math.abs(f.change), 1)}%` : figure(Math.abs(f.change));
  const from = `${figure(f.previousValue)} ${PERIOD_NAME[f.condition.against]}`;
  return direction === "unchanged" ? `unchanged from ${from}` : `${direction} ${amount} from ${from}`;
}

const HEADLINE: Record<AlertMessageKind, string> = { firing: "Alert", renotify: "Still firing", resolved: "Resolved" };

/** The subject and text of one message: what fired (or resolved), the value against the threshold, the change, the links. */
export function alertText(f: AlertFinding): AlertText {
  const figure = figureFormat(f.widget, f.column, f.formats);
  const watched = f.widget.spec.component === "kpi" ? f.widget.metadata.name : `${f.widget.metadata.name} · ${humanize(f.column)}`;
  const where = f.dimension ? ` for ${humanize(f.dimension.column)} ${f.dimension.value}` : "";
  const valueText = f.value === null ? "no value" : figure(f.value);
  const change = changeWords(f, figure);
  const condition = conditionWords(f.condition, figure);

  const stateLine =
    f.kind === "resolved"
      ? `${watched}${where} is ${valueText}: no longer ${condition}.`
      : f.condition.kind === "no_data"
        ? `${watched}${where} has no data under the alert's filters.`
        : `${watched}${where} is ${valueText}${change ? `, ${change}` : ""}: ${condition}.`;
  const headline = f.condition.kind === "no_data" && f.kind !== "resolved" ? "no data" : `${valueText}${change ? ` (${change})` : ""}, ${f.kind === "resolved" ? "no longer " : ""}${condition}`;
  const links = { dashboardLink: dashboardLink(f.dashboard.slug, f.filters), alertLink: alertPageLink(f.alertId) };
  const body = [
    stateLine,
    `Alert "${f.alertName}" on ${f.dashboard.name}, in the scope of ${f.scope}.`,
    "",
    `Open the dashboard with the alert's filters: ${links.dashboardLink}`,
    `History, snooze and mute: ${links.alertLink}`,
  ].join("\n");
  return { subject: `${HEADLINE[f.kind]}: ${watched}${where} ${headline}`, body, ...links };
}
