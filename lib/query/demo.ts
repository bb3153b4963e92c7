import type { Dataset } from "@/lib/manifest/schema";

/**
 * `demo` data (SPEC §2.2): the `sample_orders` rows, generated in memory so a layout can be
 * prototyped before any warehouse exists. Deterministic: the same `now` (to the day) gives
 * the same rows, and the dates always end today so relative date filters find data.
 */
export const SAMPLE_ORDER_COLUMNS = ["order_id", "order_date", "location", "region", "channel", "category", "product", "quantity", "revenue", "cost"] as const;
export type SampleOrderColumn = (typeof SAMPLE_ORDER_COLUMNS)[number];

const SAMPLE_ROW_COUNT = 2_000;
const SAMPLE_DAYS = 180;
const LOCATIONS: [string, string][] = [["New York", "East"], ["Boston", "East"], ["Chicago", "Central"], ["Austin", "Central"], ["San Francisco", "West"]];
const PRODUCTS: [string, string, number][] = [
  ["Espresso beans", "Coffee", 18], ["Filter beans", "Coffee", 15], ["Green tea", "Tea", 9], ["Chai", "Tea", 11],
  ["Ceramic mug", "Merchandise", 14], ["Travel mug", "Merchandise", 26], ["Grinder", "Equipment", 89], ["Kettle", "Equipment", 64],
];
const CHANNELS = ["store", "online", "partner"];

// mulberry32: a tiny seeded generator, so demo rows never depend on Math.random.
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function sampleOrders(now: Date): Record<SampleOrderColumn, string | number>[] {
  const random = seededRandom(20_241_201);
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const rows: Record<SampleOrderColumn, string | number>[] = [];
  for (let i = 0; i < SAMPLE_ROW_COUNT; i++) {
    const [location, region] = LOCATIONS[Math.floor(random() ** 1.4 * LOCATIONS.length)];
    const [product, category, price] = PRODUCTS[Math.floor(random() * PRODUCTS.length)];
    const quantity = 1 + Math.floor(random() * random() * 4);
    const revenue = Math.round(quantity * price * (0.9 + 0.2 * random()) * 100) / 100;
    rows.push({
      order_id: i + 1,
      order_date: new Date(today - Math.floor(random() * SAMPLE_DAYS) * 86_400_000).toISOString().slice(0, 10),
      location,
      region,
      channel: CHANNELS[Math.floor(random() * random() * CHANNELS.length)],
      category,
      product,
      quantity,
      revenue,
      cost: Math.round(revenue * (0.45 + 0.2 * random()) * 100) / 100,
    });
  }
  return rows.sort((a, b) => String(a.order_date).localeCompare(String(b.order_date)) || Number(a.order_id) - Number(b.order_id));
}

/** `sample_orders.<column>`: how a demo dataset (one without a source) names its columns. */
export function demoColumn(expression: string): SampleOrderColumn | null {
  const match = /^\s*sample_orders\.([a-z_]+)\s*$/.exec(expression);
  return match && (SAMPLE_ORDER_COLUMNS as readonly string[]).includes(match[1]) ? (match[1] as SampleOrderColumn) : null;
}

export type DemoAggregate = { fn: "sum" | "avg" | "min" | "max" | "count"; column: SampleOrderColumn | null };

/** The `sql` metrics a demo dataset understands: sum/avg/min/max of a column, count(*). */
export function demoAggregate(expression: string): DemoAggregate | null {
  const match = /^\s*(sum|avg|min|max|count)\s*\(\s*(\*|sample_orders\.[a-z_]+)\s*\)\s*$/i.exec(expression);
  if (!match) return null;
  const fn = match[1].toLowerCase() as DemoAggregate["fn"];
  if (match[2] === "*") return fn === "count" ? { fn, column: null } : null;
  const column = demoColumn(match[2]);
  return column ? { fn, column } : null;
}

/**
 * Groups demo rows by a dataset's dimensions and computes its sql metrics in memory, the
 * same shape a warehouse dataset returns. Validation has already checked every expression.
 */
export function aggregateDemoRows(rows: readonly Record<string, unknown>[], dataset: Dataset): Record<string, unknown>[] {
  const dimensions = dataset.dimensions.map((d) => ({ id: d.id, column: demoColumn(d.column) as SampleOrderColumn }));
  const metrics = dataset.metrics.filter((m) => m.type === "sql").map((m) => ({ id: m.id, agg: demoAggregate(m.expression) as DemoAggregate }));
  if (metrics.length === 0) return rows.map((row) => Object.fromEntries(dimensions.map((d) => [d.id, row[d.column]])));
  const groups = new Map<string, { key: Record<string, unknown>; members: Record<string, unknown>[] }>();
  for (const row of rows) {
    const key = JSON.stringify(dimensions.map((d) => row[d.column]));
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { key: Object.fromEntries(dimensions.map((d) => [d.id, row[d.column]])), members: [] }));
    group.members.push(row);
  }
  return [...groups.values()].map(({ key, members }) => {
    const out: Record<string, unknown> = { ...key };
    for (const { id, agg } of metrics) {
      const values = agg.column === null ? members.map(() => 1) : members.map((m) => Number(m[agg.column as string]));
      out[id] =
        agg.fn === "count" ? values.length
        : agg.fn === "sum" ? Math.round(values.reduce((a, b) => a + b, 0) * 100) / 100
        : agg.fn === "avg" ? values.reduce((a, b) => a + b, 0) / values.length
        : agg.fn === "min" ? Math.min(...values)
        : Math.max(...values);
    }
    return out;
  });
}
