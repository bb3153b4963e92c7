import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { ALLOWED_FUNCTIONS, SqlNotAllowed, checkStatement } from "./sql-allow-list";

/*
 * The allow-list held against the database it guards (both engines): every function the reader
 * role may execute is listed from pg_proc, and the checker must refuse each one whose name is
 * not on the allow-list, however it is written. When an upgrade of PostgreSQL or PGlite brings
 * new functions, they are refused until someone adds them here on purpose; a new overload of an
 * allowed name that runs with its owner's rights, or lives outside pg_catalog, fails the test.
 */

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

function refused(sql: string): boolean {
  try {
    checkStatement(sql);
    return false;
  } catch (error) {
    if (error instanceof SqlNotAllowed) return true;
    throw error;
  }
}

describe("every function the reader may execute", () => {
  it("is refused by the checker unless it is on the allow-list", async () => {
    const { system } = await getDb();
    const functions = await system.query<{ schema: string; name: string }>(
      `SELECT DISTINCT n.nspname AS schema, p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE has_function_privilege('quarry_reader', p.oid, 'EXECUTE')`,
    );
    expect(functions.length).toBeGreaterThan(1000);
    const wronglyAccepted = functions.flatMap(({ schema, name }) => {
      if (ALLOWED_FUNCTIONS.has(name) && schema === "pg_catalog") return [];
      const spellings = [`SELECT ${quote(schema)}.${quote(name)}()`, `SELECT ${quote(name)}()`, `SELECT * FROM ${quote(schema)}.${quote(name)}()`];
      // An allowed name outside pg_catalog is still refused when qualified with its own schema.
      const checked = ALLOWED_FUNCTIONS.has(name) ? spellings.slice(0, 1) : spellings;
      return checked.filter((sql) => !refused(sql));
    });
    expect(wronglyAccepted).toEqual([]);
  });

  it("each allowed name is a built-in that runs with the caller's rights, in every overload", async () => {
    const { system } = await getDb();
    const overloads = await system.query<{ name: string; signature: string; secdef: boolean }>(
      `SELECT p.proname AS name, p.oid::regprocedure::text AS signature, p.prosecdef AS secdef
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE p.proname = ANY($1) AND n.nspname = 'pg_catalog'`,
      [[...ALLOWED_FUNCTIONS]],
    );
    expect(overloads.filter((o) => o.secdef).map((o) => o.signature)).toEqual([]);
    // Every listed name exists (a typo in the list would be a silent hole in what dashboards can use).
    const present = new Set(overloads.map((o) => o.name));
    // Names the parser writes as calls though no pg_proc row has them (EXTRACT and friends are rewritten by the parser).
    const parserOnly = new Set(["extract", "current_date", "regexp_like", "regexp_count", "regexp_substr"]);
    expect([...ALLOWED_FUNCTIONS].filter((name) => !present.has(name) && !parserOnly.has(name))).toEqual([]);
  });
});
