// A small published dashboard for scheduled-report tests: orders per location (a table) and in all (a KPI),
// under a date filter. Only admins and general managers may view it, so an analyst recipient is refused.
export const SCHEDULE_TEST_MANIFEST = `version: "1.0"
kind: dashboard
metadata: { id: scheduled-sales, name: Scheduled sales }
platform: { scope: org, roles: [admin, general_manager], allow_embed: false, public: false }
spec:
  datasets:
    - id: sales
      from: orders JOIN locations ON locations.id = orders.location_id
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: location_id, column: orders.location_id }
        - { id: location, column: locations.name }
      metrics:
        - { id: orders, type: sql, expression: count(*), format: number }
  tabs:
    - id: main
      name: Main
      widgets: [date, orders_total, by_location]
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
metadata: { id: orders_total, name: Orders in all }
spec:
  component: kpi
  layout: { x: 0, y: 1, w: 4, h: 2 }
  data: { kind: dataset, dataset: sales, columns: [orders], mappings: { value: orders } }
  display:
    kpi: { format: number }
---
version: "1.0"
kind: widget
metadata: { id: by_location, name: Orders by location }
spec:
  component: table
  layout: { x: 0, y: 3, w: 12, h: 4 }
  data: { kind: dataset, dataset: sales, columns: [location, orders] }
  display:
    table: { page_size: 10 }
`;
