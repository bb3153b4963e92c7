import { queryDashboard, queryEmbed, queryPublicDashboard, type WidgetResult, type WidgetResults } from "@/lib/dashboards/contract";
import { ApiClientError, callApi } from "@/components/api-client";

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

/** Attempts of one round trip the server answers busy (503) before its error is shown; waits in all ≈ 1 + 2 + 4 + 8 + 16 + 30 s. */
const BUSY_ATTEMPTS = 7;
const BUSY_MAX_WAIT_S = 30;

/**
 * Runs `request` again while the server answers busy: 503 with Retry-After (no engine slot or
 * connection in time). It waits the Retry-After, then twice as long each time (at most 30 s),
 * calling `onWait` with the seconds left before the next attempt, once a second, so the viewer can
 * say "busy, retrying in N s", and `onWait(null)` as it tries again. A 503 without Retry-After (a
 * request past its own budget: asking again costs the same), any other error, an abort, or a busy
 * answer to the last attempt is thrown as is.
 */
export async function retryWhileBusy<T>(request: () => Promise<T>, signal: AbortSignal, onWait: (seconds: number | null) => void): Promise<T> {
  let previous = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (error) {
      if (!(error instanceof ApiClientError) || error.status !== 503 || error.retryAfter === null || attempt >= BUSY_ATTEMPTS || signal.aborted) throw error;
      const wait = Math.min(BUSY_MAX_WAIT_S, Math.max(error.retryAfter, previous * 2));
      previous = wait;
      for (let left = wait; left > 0; left--) {
        onWait(left);
        await new Promise<void>((resolve, reject) => {
          const stop = () => {
            clearTimeout(timer);
            reject(signal.reason);
          };
          const timer = setTimeout(() => {
            signal.removeEventListener("abort", stop);
            resolve();
          }, 1_000);
          signal.addEventListener("abort", stop, { once: true });
        });
      }
      onWait(null);
    }
  }
}
