import { expect, test } from "@playwright/test";
import { sameOrigin } from "./same-origin";

/*
 * The metrics catalog (issue 48 §3): a shared dataset pushed through plan/apply with a dashboard that names it by ref
 * shows on /metrics with its owner, the widget that reads it and a small chart; the admin certifies it from the page,
 * and a push that changes its definition removes the mark.
 */

const run = Date.now().toString(36);
const DATASET = `e2e_sales_${run}`;
const SLUG = `metrics-e2e-${run}`;

const dataset = (expression: string) => `version: "1.0"
kind: dataset
metadata: { id: ${DATASET}, name: E2E sales, owner: finance@acme.test }
spec:
  from: orders
  dimensions:
    - { id: channel, column: orders.channel }
  metrics:
    - { id: e2e_revenue, type: sql, expression: "${expression}", label: E2E revenue }
`;

const DASHBOARD = `version: "1.0"
kind: dashboard
metadata: { id: metrics-e2e, name: Metrics e2e }
spec:
  datasets:
    - { ref: ${DATASET} }
  tabs:
    - { id: main, name: Main, widgets: [revenue_kpi] }
---
version: "1.0"
kind: widget
metadata: { id: revenue_kpi, name: Revenue }
spec:
  component: kpi
  layout: { x: 0, y: 0, w: 3, h: 2 }
  data: { kind: dataset, dataset: ${DATASET}, columns: [e2e_revenue], mappings: { value: e2e_revenue } }
  display: { kpi: { format: number } }
`;

test("a pushed metric shows in the catalog, is certified by the admin, and loses the mark when its definition changes", async ({ page }) => {
  const api = page.request;
  const headers = sameOrigin();
  const key = await (await api.post("/api/v1/api-keys", { headers, data: { name: `Metrics e2e ${run}`, scopes: ["dashboards:read", "dashboards:write", "dashboards:publish"] } })).json();
  const ci = { authorization: `Bearer ${key.key}` };
  async function push(expression: string) {
    const files = [
      { path: `${DATASET}.yaml`, content: dataset(expression) },
      { path: `${SLUG}.yaml`, content: DASHBOARD },
    ];
    const plan = await (await api.post("/api/v1/custom-dashboards/_plan", { headers: ci, data: { files } })).json();
    expect(plan.valid).toBe(true);
    const applied = await api.post("/api/v1/custom-dashboards/_apply", { headers: ci, data: { files, expected: plan.expected, expected_datasets: plan.expected_datasets, publish: true } });
    expect(applied.status()).toBe(200);
  }
  await push("sum(orders.amount)");

  await page.goto("/metrics");
  await expect(page.getByRole("heading", { level: 1, name: "Metrics" })).toBeVisible();
  await page.getByRole("navigation").getByRole("link", { name: "Metrics" }).first().waitFor();
  const row = page.locator(`tr[data-metric="${DATASET}.e2e_revenue"]`);
  await expect(row).toContainText("finance@acme.test");
  await expect(row).toContainText("Metrics e2e");
  await expect(row.getByRole("img", { name: /E2E revenue by channel/ })).toBeVisible();
  await expect(row).toContainText("Not certified");

  await row.getByRole("button", { name: "Certify E2E revenue" }).click();
  await expect(row).toContainText("Certified");
  await expect(row.getByRole("button", { name: "Remove certification of E2E revenue" })).toBeVisible();

  await push("sum(orders.amount - orders.cost)");
  await page.reload();
  await expect(row).toContainText("Not certified");
});
