import type { z } from "zod";
import type { QueryResponse, WidgetResult as WidgetResultSchema, WidgetResults } from "@/lib/dashboards/contract";

export type WidgetResult = z.infer<typeof WidgetResultSchema>;
export type { WidgetResults };

/** Where a dashboard's widget data comes from: the signed-in batch endpoint, an embed token, or a public dashboard. */
export type QueryTarget =
  | { kind: "dashboard"; id: string; version: "draft" | "published" | number }
  | { kind: "embed"; token: string }
  | { kind: "public"; org: string; slug: string };

function requestOf(target: QueryTarget, filters: Record<string, unknown>, widgetIds: string[]): { url: string; body: unknown } {
  switch (target.kind) {
    case "embed":
      return { url: "/api/v1/embed/query", body: { token: target.token, filters, widget_ids: widgetIds } };
    case "public":
      return { url: "/api/v1/public/query", body: { org: target.org, slug: target.slug, filters, widget_ids: widgetIds } };
    case "dashboard":
      return { url: `/api/v1/custom-dashboards/${encodeURIComponent(target.id)}/query`, body: { filters, widget_ids: widgetIds, version: target.version } };
  }
}

/** The `detail` of an error answer as one readable line. */
export function detailText(body: unknown, status: number): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) return detail.map((d: { msg?: string }) => d.msg ?? "invalid").join("; ");
  return `The server answered ${status}`;
}

/** One round trip for the given widgets; throws an Error with the server's detail when the request fails as a whole. */
export async function queryWidgets(target: QueryTarget, filters: Record<string, unknown>, widgetIds: string[], signal: AbortSignal): Promise<WidgetResults> {
  const { url, body } = requestOf(target, filters, widgetIds);
  // Embeds and public links act with what the page carries, never with the viewer's session cookie.
  const credentials = target.kind === "dashboard" ? "same-origin" : "omit";
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal, cache: "no-store", credentials });
  const json: unknown = await res.json().catch(() => null);
  if (!res.ok) throw new Error(detailText(json, res.status));
  return (json as z.infer<typeof QueryResponse>).widgets;
}

/** The same error for every widget of a failed round trip, so each shows it in place. */
export function failedResults(widgetIds: readonly string[], detail: string): WidgetResults {
  return Object.fromEntries(widgetIds.map((id) => [id, { columns: [], rows: [], error: { detail }, cached: false }]));
}
