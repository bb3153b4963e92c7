import type { z } from "zod";
import type { QueryResponse, WidgetResult as WidgetResultSchema, WidgetResults } from "@/lib/dashboards/contract";

export type WidgetResult = z.infer<typeof WidgetResultSchema>;
export type { WidgetResults };

/** Where a dashboard's widget data comes from: the signed-in batch endpoint, or an embed token. */
export type QueryTarget = { kind: "dashboard"; id: string; version: "draft" | "published" | number } | { kind: "embed"; token: string };

/** The `detail` of an error answer as one readable line. */
export function detailText(body: unknown, status: number): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) return detail.map((d: { msg?: string }) => d.msg ?? "invalid").join("; ");
  return `The server answered ${status}`;
}

/** One round trip for the given widgets; throws an Error with the server's detail when the request fails as a whole. */
export async function queryWidgets(target: QueryTarget, filters: Record<string, unknown>, widgetIds: string[], signal: AbortSignal): Promise<WidgetResults> {
  const url = target.kind === "embed" ? "/api/v1/embed/query" : `/api/v1/custom-dashboards/${encodeURIComponent(target.id)}/query`;
  const body = target.kind === "embed" ? { token: target.token, filters, widget_ids: widgetIds } : { filters, widget_ids: widgetIds, version: target.version };
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal, cache: "no-store" });
  const json: unknown = await res.json().catch(() => null);
  if (!res.ok) throw new Error(detailText(json, res.status));
  return (json as z.infer<typeof QueryResponse>).widgets;
}

/** The same error for every widget of a failed round trip, so each shows it in place. */
export function failedResults(widgetIds: readonly string[], detail: string): WidgetResults {
  return Object.fromEntries(widgetIds.map((id) => [id, { columns: [], rows: [], error: { detail }, cached: false }]));
}
