/** The manifest a new dashboard starts from: small, valid, and showing the main parts (dataset, filter, KPI, chart). */
export function starterManifest(name: string, id: string): string {
  const quoted = JSON.stringify(name);
  return `version: "1.0"
kind: dashboard
metadata:
  id: ${id || "dashboard"}
  name: ${quoted}
platform:
  roles: [admin, general_manager, analyst]
  allow_embed: false
spec:
  datasets:
    - id: sales
      from: orders JOIN locations ON locations.id = orders.location_id
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: location, column: locations.name }
      metrics:
        # A metric's format is how every widget shows it (tiles, tables, tooltips).
        - { id: revenue, type: sql, expression: sum(orders.amount), format: { type: currency, decimals: 0 } }
  config:
    filterPanel: { position: top }
---
version: "1.0"
kind: widget
metadata: { id: date, name: Order date }
spec:
  component: filter
  layout: { x: 0, y: 0, w: 4, h: 1 }
  display:
    filter: { control: date, label: Order date, default: last month }
  bindings:
    - { target: "*", field: order_date, operator: date }
---
version: "1.0"
kind: widget
metadata: { id: revenue, name: Revenue }
spec:
  component: kpi
  layout: { x: 0, y: 0, w: 4, h: 2 }
  data: { kind: dataset, dataset: sales, columns: [revenue], mappings: { value: revenue } }
  display:
    kpi: { format: currency }
---
version: "1.0"
kind: widget
metadata: { id: by_location, name: Revenue by location }
spec:
  component: echarts
  layout: { x: 4, y: 0, w: 8, h: 4 }
  data: { kind: dataset, dataset: sales, columns: [location, revenue], mappings: { x: location, y: revenue } }
  display:
    echarts:
      option:
        xAxis: { type: category }
        yAxis: { type: value }
        series: [{ type: bar }]
`;
}
