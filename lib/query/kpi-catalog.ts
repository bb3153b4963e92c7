import type { Dataset } from "@/lib/manifest/schema";

/**
 * KPIs every organization can put on a dashboard (`data.kind: kpi`, or a dataset with
 * `kpi:`). Each is a dataset over the demo warehouse whose `value` column is the figure;
 * some also carry `target`, the comparison a KPI widget's delta can use. They share the
 * dimension ids `order_date`, `location_id` and `channel` where they have them, so one
 * date or location filter bound with `target: "*"` narrows every KPI. Each metric declares its
 * format, which every widget showing it uses (lib/manifest/value-format.ts).
 */
export interface KpiDefinition {
  id: string;
  name: string;
  description: string;
  dataset: Dataset;
}

const orderDimensions = [
  { id: "order_date", column: "orders.order_date" },
  { id: "location_id", column: "orders.location_id" },
  { id: "channel", column: "orders.channel" },
];

const definitions: KpiDefinition[] = [
  {
    id: "revenue",
    name: "Revenue",
    description: "Sum of order amounts.",
    dataset: { id: "revenue", from: "orders", dimensions: orderDimensions, metrics: [{ id: "value", type: "sql", expression: "sum(orders.amount)", format: "currency" }] },
  },
  {
    id: "orders",
    name: "Orders",
    description: "Number of orders.",
    dataset: { id: "orders", from: "orders", dimensions: orderDimensions, metrics: [{ id: "value", type: "sql", expression: "count(*)", format: "number" }] },
  },
  {
    id: "gross_margin",
    name: "Gross margin",
    description: "Revenue minus cost, as a percentage of revenue.",
    dataset: {
      id: "gross_margin",
      from: "orders",
      dimensions: orderDimensions,
      metrics: [
        { id: "revenue", type: "sql", expression: "sum(orders.amount)", format: "currency" },
        { id: "cost", type: "sql", expression: "sum(orders.cost)", format: "currency" },
        { id: "value", type: "formula", expression: "round((revenue - cost) / revenue * 100, 1)", format: "percent" },
      ],
    },
  },
  {
    id: "avg_order_value",
    name: "Average order value",
    description: "Revenue divided by the number of orders.",
    dataset: {
      id: "avg_order_value",
      from: "orders",
      dimensions: orderDimensions,
      metrics: [
        { id: "revenue", type: "sql", expression: "sum(orders.amount)", format: "currency" },
        { id: "orders", type: "sql", expression: "count(*)", format: "number" },
        { id: "value", type: "formula", expression: "round(revenue / orders, 2)", format: "currency" },
      ],
    },
  },
  {
    id: "revenue_vs_target",
    name: "Revenue against target",
    description: "Revenue of whole months (value) and the monthly sales targets of the same months and locations (target).",
    dataset: {
      id: "revenue_vs_target",
      // Each target's month of orders is summed by a correlated subquery (an index range of orders), not by
      // joining a grouping of every order: the widget's month condition reaches sales_targets, so a request
      // sums the orders of the months it shows instead of all 24 (docs/performance.md, issue 31). The month's
      // end is computed with the targets, not inside the orders scan: under row-level security a condition
      // calling a function that is not leakproof (the date arithmetic) may not be an index condition, and
      // the range was then read from the month's start to the end of the data.
      // MATERIALIZED keeps the planner from inlining it back.
      query: `WITH t AS MATERIALIZED (
                SELECT location_id, month, target_amount, (month + interval '1 month')::date AS next_month
                  FROM sales_targets WHERE month <= current_date)
              SELECT t.location_id, t.month, t.target_amount,
                     COALESCE((SELECT sum(o.amount) FROM orders o
                               WHERE o.location_id = t.location_id AND o.order_date >= t.month
                                 AND o.order_date < t.next_month), 0) AS amount
              FROM t`,
      dimensions: [
        // Targets are monthly, so the date dimension is the first day of the month.
        { id: "order_date", column: "revenue_vs_target.month" },
        { id: "location_id", column: "revenue_vs_target.location_id" },
      ],
      metrics: [
        { id: "value", type: "sql", expression: "sum(revenue_vs_target.amount)", format: "currency" },
        { id: "target", type: "sql", expression: "sum(revenue_vs_target.target_amount)", format: "currency" },
        { id: "gap_pct", type: "formula", expression: "round((value - target) / target * 100, 1)", format: "percent" },
      ],
    },
  },
];

export const KPI_CATALOG: ReadonlyMap<string, KpiDefinition> = new Map(definitions.map((d) => [d.id, d]));

/** Every column a KPI returns: its dimensions and metrics. */
export function kpiColumns(kpi: KpiDefinition): string[] {
  return [...kpi.dataset.dimensions.map((d) => d.id), ...kpi.dataset.metrics.map((m) => m.id)];
}
