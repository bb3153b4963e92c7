import { queryDashboard, queryEmbed, queryPublicDashboard, type WidgetResult, type WidgetResults } from "@/lib/dashboards/contract";
import { callApi } from "@/components/api-client";

export type { WidgetResult, WidgetResults };

/** Where a dashboard's widget data comes from: the signed-in batch endpoint, an embed token, or a public dashboard. */
export type QueryTarget =
  | { kind: "dashboard"; id: string; version: "draft" | "published" | number }
  | { kind: "embed"; token: string }
  | { kind: "public"; org: string; slug: string };

/** One round trip for the given widgets, cancelled by `signal`; throws ApiClientError with the server's detail when the request fails as a whole. */
export async function queryWidgets(target: QueryTarget, filters: Record<string, unknown>, widgetIds: string[], signal: AbortSignal): Promise<WidgetResults> {
  // Embed and public endpoints declare credentials "none": callApi sends them without the viewer's cookie.
  switch (target.kind) {
    case "embed":
      return (await callApi(queryEmbed, { body: { token: target.token, filters, widget_ids: widgetIds }, signal })).widgets;
    case "public":
      return (await callApi(queryPublicDashboard, { body: { org: target.org, slug: target.slug, filters, widget_ids: widgetIds }, signal })).widgets;
    case "dashboard":
      return (await callApi(queryDashboard, { params: { id: target.id }, body: { filters, widget_ids: widgetIds, version: target.version }, signal })).widgets;
  }
}

/** The same error for every widget of a failed round trip, so each shows it in place. */
export function failedResults(widgetIds: readonly string[], detail: string): WidgetResults {
  return Object.fromEntries(widgetIds.map((id) => [id, { columns: [], rows: [], error: { detail }, cached: false }]));
}
