import { describe, expect, it } from "vitest";
import { parseDashboardYaml } from "./parse";

/** A dashboard over one `from` dataset whose fields carry `access:` blocks (issue 48 §4). */
const dashboard = (fields: string, source = "      from: orders JOIN locations ON locations.id = orders.location_id") => `version: "1.0"
kind: dashboard
metadata: { id: sales, name: Sales }
spec:
  datasets:
    - id: sales
${source}
${fields}
  tabs:
    - { id: main, name: Main, widgets: [] }
`;

const errorsOf = (yaml: string) => {
  const result = parseDashboardYaml(yaml);
  if (result.ok) throw new Error("expected errors");
  return result.errors.map((e) => ({ path: e.path.join("."), line: e.line, column: e.column, message: e.message }));
};

describe("field policies in the manifest (access:)", () => {
  it("accepts hidden, a mask, roles and attributes on dimensions and metrics, and access on a formula", () => {
    const result = parseDashboardYaml(
      dashboard(`      dimensions:
        - { id: channel, column: orders.channel, access: { mask: "left(orders.channel, 1) || '***'", roles: [admin] } }
        - { id: city, column: locations.city, access: { hidden: true } }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount), access: { roles: [admin, general_manager], attributes: { region: [eu, us] } } }
        - { id: share, type: formula, expression: revenue / 2, access: { roles: [admin] } }`),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const dataset = result.dashboard.datasets.get("sales")!;
    expect(dataset.dimensions[0].access).toEqual({ hidden: false, mask: "left(orders.channel, 1) || '***'", roles: ["admin"] });
    expect(dataset.metrics[0].access?.attributes).toEqual({ region: ["eu", "us"] });
  });

  it("refuses an unknown role with its line and column", () => {
    const errors = errorsOf(
      dashboard(`      dimensions:
        - id: channel
          column: orders.channel
          access:
            roles: [admin, cashier]`),
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ path: "spec.datasets.0.dimensions.0.access.roles.1", line: 12 });
    expect(errors[0].column).toBeGreaterThan(1);
    expect(errors[0].message).toMatch(/admin|general_manager|analyst/);
  });

  it("refuses a mask that is not an expression, an unqualified column in one, a mask on a formula or a demo dataset", () => {
    const errors = errorsOf(
      dashboard(`      dimensions:
        - { id: channel, column: orders.channel, access: { mask: "upper(orders.channel" } }
        - { id: city, column: locations.city, access: { mask: "city; DROP TABLE orders" } }
        - { id: code, column: locations.code, access: { mask: "left(code, 1)" } }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
        - { id: share, type: formula, expression: revenue / 2, access: { mask: "0" } }`),
    );
    const byPath = Object.fromEntries(errors.map((e) => [e.path, e]));
    expect(byPath["spec.datasets.0.dimensions.0.access.mask"].message).toBe("unclosed '('");
    expect(byPath["spec.datasets.0.dimensions.0.access.mask"].line).toBe(9);
    expect(byPath["spec.datasets.0.dimensions.1.access.mask"].message).toMatch(/';' is not allowed/);
    expect(byPath["spec.datasets.0.dimensions.2.access.mask"].message).toBe("column 'code' must be fully qualified, e.g. <table>.code");
    expect(byPath["spec.datasets.0.metrics.1.access.mask"].message).toMatch(/formula metric cannot be masked/);

    const demo = errorsOf(dashboard(`      dimensions:\n        - { id: channel, column: sample_orders.channel, access: { mask: "'x'" } }`, ""));
    expect(demo.map((e) => e.message)).toEqual(["a mask is SQL over the dataset's rows: it needs a `from` or `query` dataset"]);
  });
});
