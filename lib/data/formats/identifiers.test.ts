import { describe, expect, it } from "vitest";
import { columnIdentifier, columnIdentifiers } from "./identifiers";

describe("column identifiers", () => {
  it.each([
    ["Unit Price (€)", "unit_price"],
    ["2024 Sales", "c_2024_sales"],
    ["Größe / Café", "gro_e_cafe"],
    ["  ", "column"],
    ['"; DROP TABLE x; --', "drop_table_x"],
    ["ORDER", "order"],
    ["a".repeat(100), "a".repeat(63)],
  ])("%j → %s", (header, identifier) => {
    expect(columnIdentifier(header)).toBe(identifier);
    expect(identifier).toMatch(/^[a-z_][a-z0-9_]{0,62}$/);
  });

  it("resolves collisions and keeps clear of the reserved names", () => {
    expect(columnIdentifiers(["Name", "name", "NAME ", "", "", "org_id", "ctid", "name_2"])).toEqual(["name", "name_2", "name_3", "column", "column_2", "org_id_2", "ctid_2", "name_2_2"]);
    const long = columnIdentifiers(["x".repeat(80), "x".repeat(70)]);
    expect(long).toEqual(["x".repeat(63), `${"x".repeat(61)}_2`]);
  });
});
