import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { getDb } from "./client";

/*
 * prisma/schema.prisma is written by hand beside the SQL migrations that create the tables (Prisma's
 * schema engine, which could diff the two, cannot be installed offline: docs/conventions.md "Data").
 * This test holds them together: the test database is migrated from prisma/migrations, and every model's
 * table and columns, their types and nullability, must be what the schema says; a column a migration
 * adds to a modelled table must be in the schema too.
 */

interface Field {
  column: string;
  type: string;
  list: boolean;
  optional: boolean;
}

/** The models of schema.prisma: table name -> scalar fields by column (relation fields have no column). */
function modelsOf(schema: string): Map<string, Map<string, Field>> {
  const models = new Map<string, Map<string, Field>>();
  const modelNames = new Set([...schema.matchAll(/^model\s+(\w+)\s*\{/gm)].map((m) => m[1]));
  for (const [, name, body] of schema.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)) {
    const table = /@@map\("([^"]+)"\)/.exec(body)?.[1] ?? name;
    const fields = new Map<string, Field>();
    for (const raw of body.split("\n")) {
      const line = raw.replace(/\/\/.*$/, "").trim();
      const match = /^(\w+)\s+(Unsupported\("[^"]+"\)|\w+)(\[\])?(\?)?/.exec(line);
      if (!match || line.startsWith("@@")) continue;
      const [, field, type, list, optional] = match;
      if (modelNames.has(type)) continue;
      fields.set(/@map\("([^"]+)"\)/.exec(line)?.[1] ?? field, { column: /@map\("([^"]+)"\)/.exec(line)?.[1] ?? field, type, list: list !== undefined, optional: optional !== undefined });
    }
    models.set(table, fields);
  }
  return models;
}

/** The PostgreSQL types (information_schema's data_type, udt_name for arrays and extensions) each Prisma type may be stored as. */
const STORED_AS: Record<string, readonly string[]> = {
  String: ["text", "character varying", "character"],
  Int: ["integer", "smallint"],
  BigInt: ["bigint"],
  Boolean: ["boolean"],
  DateTime: ["timestamp with time zone", "timestamp without time zone", "date"],
  Decimal: ["numeric"],
  Json: ["jsonb", "json"],
  Bytes: ["bytea"],
  'Unsupported("vector")': ["vector"],
  'Unsupported("tsvector")': ["tsvector"],
  // An array the client never reads or writes (written with SQL once, NULL until then: dashboard_versions.rollup_ids).
  'Unsupported("text[]")': ["_text"],
};
const ARRAY_ELEMENT: Record<string, string> = { String: "_text", Int: "_int4", BigInt: "_int8" };

interface Column {
  table: string;
  column: string;
  dataType: string;
  udtName: string;
  nullable: boolean;
}

async function migratedColumns(): Promise<Column[]> {
  const { system } = await getDb();
  return system.query<Column>(
    `SELECT table_name AS "table", column_name AS "column", data_type AS "dataType", udt_name AS "udtName", is_nullable = 'YES' AS "nullable"
       FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
  );
}

/** What differs between the schema's models and the migrated tables, one sentence each. */
function drift(models: Map<string, Map<string, Field>>, columns: Column[]): string[] {
  const problems: string[] = [];
  for (const [table, fields] of models) {
    const stored = new Map(columns.filter((c) => c.table === table).map((c) => [c.column, c]));
    if (stored.size === 0) {
      problems.push(`model table ${table} is created by no migration`);
      continue;
    }
    for (const field of fields.values()) {
      const column = stored.get(field.column);
      if (!column) {
        problems.push(`${table}.${field.column} is in schema.prisma but no migration creates it`);
        continue;
      }
      const typeOk = field.list
        ? column.dataType === "ARRAY" && column.udtName === ARRAY_ELEMENT[field.type]
        : (STORED_AS[field.type] ?? []).some((t) => t === column.dataType || ((column.dataType === "USER-DEFINED" || column.dataType === "ARRAY") && t === column.udtName));
      if (!typeOk) problems.push(`${table}.${field.column} is ${field.type}${field.list ? "[]" : ""} in schema.prisma but ${column.dataType} (${column.udtName}) in the migrations`);
      // Prisma cannot mark a list optional on PostgreSQL (`String[]?` is refused), so a list's nullability is
      // the migration's alone: api_keys.location_ids is NULL for "every location" (migration 0032).
      if (!field.list && field.optional !== column.nullable) problems.push(`${table}.${field.column} is ${field.optional ? "optional" : "required"} in schema.prisma but ${column.nullable ? "nullable" : "NOT NULL"} in the migrations`);
    }
    for (const column of stored.keys()) if (!fields.has(column)) problems.push(`${table}.${column} is created by the migrations but missing from schema.prisma`);
  }
  return problems;
}

describe("schema.prisma and the migrations", () => {
  const models = modelsOf(fs.readFileSync(path.join(process.cwd(), "prisma", "schema.prisma"), "utf8"));

  it("reads every model of the schema", () => {
    expect(models.size).toBeGreaterThan(20);
    expect(models.get("document_chunks")?.get("tsv")).toEqual({ column: "tsv", type: 'Unsupported("tsvector")', list: false, optional: true });
    expect(models.get("users")?.get("location_ids")).toMatchObject({ type: "String", list: true, optional: false });
    // A relation field is no column.
    expect(models.get("dashboards")?.has("versions")).toBe(false);
  });

  it("agree: every model's table and columns, with their types and nullability, are what the migrations create", async () => {
    expect(drift(models, await migratedColumns())).toEqual([]);
  });

  it("would see a drift (the check can fail)", async () => {
    const columns = await migratedColumns();
    const changed = new Map(models);
    const users = new Map(changed.get("users"));
    users.set("nickname", { column: "nickname", type: "String", list: false, optional: true });
    users.delete("email");
    users.set("session_epoch", { column: "session_epoch", type: "String", list: false, optional: true });
    changed.set("users", users);
    expect(drift(changed, columns)).toEqual([
      "users.session_epoch is String in schema.prisma but integer (int4) in the migrations",
      "users.session_epoch is optional in schema.prisma but NOT NULL in the migrations",
      "users.nickname is in schema.prisma but no migration creates it",
      "users.email is created by the migrations but missing from schema.prisma",
    ]);
  });
});
