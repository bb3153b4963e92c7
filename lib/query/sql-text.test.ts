import { describe, expect, it } from "vitest";
import { SqlTextError, checkSqlFragment, checkSqlQuery, unqualifiedColumns } from "./sql-text";

// PostgreSQL's scanner reads only space, \t, \n, \r, \f and \v as whitespace; every other
// character (every byte >= 0x80 in UTF-8) is part of an identifier.
describe("the SQL lexer reads whitespace as PostgreSQL does", () => {
  it("reads U+00A0 (no-break space) as part of a name, not as a space", () => {
    expect(unqualifiedColumns("a\u00a0b")).toEqual([{ name: "a\u00a0b", at: 0 }]);
    // `SELECT<U+00A0>1` is one identifier to PostgreSQL, so not a read query.
    expect(() => checkSqlQuery("SELECT\u00a01")).toThrow(/only read queries are allowed/);
  });

  it("reads other Unicode spaces (U+3000 ideographic space, U+2003 em space) as part of a name", () => {
    expect(unqualifiedColumns("x\u3000IS NULL")).toEqual([{ name: "x\u3000IS", at: 0 }]);
    expect(unqualifiedColumns("total\u2003+ 1")).toEqual([{ name: "total\u2003", at: 0 }]);
  });

  it("still reads the six ASCII spaces as spaces", () => {
    expect(unqualifiedColumns("a \tb\nc\rd\fe\vf").map((c) => c.name)).toEqual(["a", "b", "c", "d", "e", "f"]);
    expect(checkSqlQuery("SELECT 1 ;\n\t")).toBe("SELECT 1");
  });

  it("keeps a trailing U+00A0 that belongs to the last name", () => {
    expect(checkSqlQuery("SELECT o.amount\u00a0 ")).toBe("SELECT o.amount\u00a0");
  });

  it("reads a dollar-quote tag with non-ASCII letters as one string", () => {
    expect(checkSqlQuery("SELECT $é$;$é$")).toBe("SELECT $é$;$é$");
    expect(() => checkSqlFragment("$é$ unterminated")).toThrow(SqlTextError);
  });

  it("refuses the UESCAPE characters PostgreSQL refuses: a space, and any non-ASCII one (U+00A0 too)", () => {
    expect(() => checkSqlQuery(`SELECT U&"d!0061" UESCAPE ' '`)).toThrow(/invalid UESCAPE character/);
    expect(() => checkSqlQuery(`SELECT U&"d\u00a00061" UESCAPE '\u00a0'`)).toThrow(/invalid UESCAPE character/);
    expect(unqualifiedColumns(`U&"d!0061ta" UESCAPE '!'`)).toEqual([{ name: "data", at: 0 }]);
    // No space is needed before UESCAPE: the closing quote ends the identifier.
    expect(unqualifiedColumns(`U&"d!0061ta"UESCAPE'!'`)).toEqual([{ name: "data", at: 0 }]);
  });
});
