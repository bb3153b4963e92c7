import { describe, expect, it } from "vitest";
import { alignWithTable, columnProblems, loadColumns, planProblem, tableNameFromFile, type PlannedColumn } from "./column-plan";

const column = (from: number, name: string, type: PlannedColumn["type"] = "text", include = true): PlannedColumn => ({ from, header: name, name, type, include });

describe("the upload form's column plan", () => {
  it("marks bad, reserved and repeated names among the kept columns only", () => {
    const problems = columnProblems([column(0, "day"), column(1, "Day"), column(2, "org_id"), column(3, "day"), column(4, "day", "text", false)]);
    expect([...problems.keys()]).toEqual([1, 2, 3]);
    expect(problems.get(1)).toMatch(/not a column name/);
    expect(problems.get(2)).toMatch(/reserved/);
    expect(problems.get(3)).toBe("Also the name of column 1");
  });

  it("refuses a plan that cannot load, naming why, and sends the kept columns with their source index", () => {
    const columns = [column(0, "day", "date"), column(1, "spend", "numeric"), column(2, "note", "text", false)];
    const existing = { name: "spend", columns: [{ name: "day", type: "date" as const }], key_columns: [] };
    expect(planProblem({ table: "orders", mode: "create", columns, keyColumns: [], existing: null })).toMatch(/warehouse table/);
    expect(planProblem({ table: "spend", mode: "create", columns, keyColumns: [], existing })).toMatch(/exists/);
    expect(planProblem({ table: "spend", mode: "append", columns, keyColumns: [], existing: null })).toMatch(/no table named/);
    expect(planProblem({ table: "spend", mode: "upsert", columns, keyColumns: [], existing })).toMatch(/key columns/);
    expect(planProblem({ table: "spend", mode: "upsert", columns, keyColumns: ["note"], existing })).toMatch(/not among the loaded columns/);
    expect(planProblem({ table: "spend", mode: "upsert", columns, keyColumns: ["day"], existing })).toBeNull();
    expect(planProblem({ table: "spend", mode: "create", columns: columns.map((c) => ({ ...c, include: false })), keyColumns: [], existing: null })).toMatch(/at least one/);
    expect(loadColumns(columns)).toEqual([{ name: "day", type: "date", from: 0 }, { name: "spend", type: "numeric", from: 1 }]);
  });

  it("a load into an existing table takes the table's types for the columns it shares", () => {
    const aligned = alignWithTable([column(0, "store", "integer"), column(1, "extra", "integer")], { name: "t", columns: [{ name: "store", type: "text" }] });
    expect(aligned.map((c) => c.type)).toEqual(["text", "integer"]);
  });

  it("a table name from a file name", () => {
    expect(tableNameFromFile("Marketing Spend 2026.csv")).toBe("marketing_spend_2026");
    expect(tableNameFromFile("2026 Café.xlsx")).toBe("c_2026_cafe");
    expect(tableNameFromFile("spend_abc.csv")).toBe("spend_abc");
  });
});
