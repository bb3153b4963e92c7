import { CHART_TYPES, type ChartType } from "@/lib/manifest/echarts-option-allow-list";

type Core = typeof import("./core");

// One module per chart kind (issue 31 §5): a page loads the series and components its charts draw, not all of ECharts.
const KINDS: Record<ChartType, () => Promise<unknown>> = {
  line: () => import("./line"),
  bar: () => import("./bar"),
  scatter: () => import("./scatter"),
  heatmap: () => import("./heatmap"),
  pie: () => import("./pie"),
  gauge: () => import("./gauge"),
  radar: () => import("./radar"),
};

const loading = new Map<ChartType, Promise<unknown>>();

function loadKind(kind: ChartType): Promise<unknown> {
  let pending = loading.get(kind);
  if (!pending) {
    pending = KINDS[kind]().catch((error: unknown) => {
      // A failed load (a dropped chunk) is tried again by the next chart of that kind.
      loading.delete(kind);
      throw error;
    });
    loading.set(kind, pending);
  }
  return pending;
}

/** The chart kinds a built option draws: its series' types, and radar when it has a radar coordinate system. */
export function optionKinds(option: Record<string, unknown>): ChartType[] {
  const series = Array.isArray(option.series) ? option.series : option.series ? [option.series] : [];
  const kinds = new Set<ChartType>();
  for (const entry of series) {
    const type = (entry as { type?: unknown } | null)?.type;
    if ((CHART_TYPES as readonly unknown[]).includes(type)) kinds.add(type as ChartType);
  }
  if (option.radar) kinds.add("radar");
  return [...kinds].sort();
}

/** ECharts' core with the given kinds registered, each fetched once per page. */
export async function loadEcharts(kinds: readonly ChartType[]): Promise<Core> {
  const [core] = await Promise.all([import("./core"), ...kinds.map(loadKind)]);
  return core;
}
