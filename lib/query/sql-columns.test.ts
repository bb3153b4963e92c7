import { describe, expect, it } from "vitest";
import { statementColumns } from "./sql-columns";

describe("the columns a statement returns, from PostgreSQL's parse tree", () => {
  it("names aliased outputs and column references as PostgreSQL does", () => {
    expect(statementColumns("SELECT o.channel, count(*) AS orders, sum(o.amount) AS \"Revenue\" FROM orders o GROUP BY o.channel")).toEqual(new Set(["channel", "orders", "Revenue"]));
    expect(statementColumns("WITH m AS (SELECT 1 AS one) SELECT Channel FROM orders")).toEqual(new Set(["channel"]));
  });

  it("does not guess where the names depend on the schema or on PostgreSQL's naming of expressions", () => {
    for (const sql of ["SELECT * FROM orders", "SELECT o.* FROM orders o", "SELECT count(*) FROM orders", "SELECT 1 AS a UNION SELECT 2", "SELECT 1 AS a; SELECT 2 AS b", "SELEC nonsense", ""]) {
      expect(statementColumns(sql), sql).toBeNull();
    }
  });
});
