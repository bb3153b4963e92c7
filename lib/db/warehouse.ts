/*
 * The one declaration of the tables dashboards read (issue 46 §5): the warehouse, which the migrations
 * create, rollups aggregate and change detection watches, and the tables the reader role reads beside
 * it. Read by the SQL allow-list (lib/query/sql-allow-list.ts), rollups' scope rule
 * (lib/query/rollup-scope.ts, rollup-definition.ts) and the embedded analytics copy's change
 * detection (analytics-copy.ts, through the triggers of migration 0048 that say READER_TABLES_CHANGED);
 * warehouse.test.ts holds it to the database: its columns, the reader's grants, the location policies,
 * the warehouse change triggers of migration 0036 and the reader change triggers of 0048. An
 * organization's own tables (issue 42) live in a schema of its own (ORG_SCHEMA_PREFIX below), each one
 * declared by its catalog row (org_tables, lib/data/tables.ts) as a ReaderTable of that organization
 * (orgReaderTable): the same shape, the same triggers (lib/data/storage.ts creates them), the same
 * location policy, granted to that organization's reader role alone (migration 0048).
 *
 * Framework-free and at the bottom floor: lib/db, lib/query and lib/rollups all read it.
 */


export interface ReaderTable {
  /** Columns in the order the migrations create them. */
  columns: readonly string[];
  /** The column the table's location policy tests, for location-scoped tables. */
  location?: string;
  /** A warehouse table: rollups read it, and its writes move the organization's warehouse version (migration 0036). */
  warehouse: boolean;
}

export const READER_TABLES: Readonly<Record<string, ReaderTable>> = {
  orders: { columns: ["id", "org_id", "order_date", "location_id", "product_id", "channel", "customer_id", "quantity", "amount", "cost"], location: "location_id", warehouse: true },
  locations: { columns: ["id", "org_id", "code", "name", "city", "region", "created_at", "archived_at"], location: "id", warehouse: true },
  products: { columns: ["id", "org_id", "sku", "name", "category", "unit_price", "unit_cost"], warehouse: true },
  sales_targets: { columns: ["org_id", "location_id", "month", "target_amount"], location: "location_id", warehouse: true },
  organizations: { columns: ["id", "slug", "name", "time_zone", "created_at", "currency"], warehouse: false },
  /** The rollups the engine builds (lib/rollups): aggregates of warehouse rows, under the same policies. */
  rollup_rows: { columns: ["org_id", "rollup_id", "location_id", "bucket", "key", "measures"], location: "location_id", warehouse: false },
};

/** The warehouse tables, with their columns. */
export const WAREHOUSE_COLUMNS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  Object.entries(READER_TABLES)
    .filter(([, table]) => table.warehouse)
    .map(([name, table]) => [name, table.columns]),
);

/** Location-scoped warehouse tables and the column their location policy tests. */
export const WAREHOUSE_LOCATION_COLUMNS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(READER_TABLES)
    .filter(([, table]) => table.warehouse && table.location !== undefined)
    .map(([name, table]) => [name, table.location!]),
);

/** The prefix of every organization's own schema (ORG_TABLE_SCHEMA). */
export const ORG_SCHEMA_PREFIX = "quarry_data_";

/**
 * An organization's own table as the reader reads it: `org_id` first (as the warehouse's), then its
 * columns; a warehouse table (its loads move the organization's warehouse version).
 */
export const orgReaderTable = (columns: readonly string[], location?: string): ReaderTable => ({ columns: ["org_id", ...columns], location, warehouse: true });

/**
 * The notice a statement that wrote any table the reader reads sends its client (the statement
 * triggers `reader_tables_changed` of migration 0048 on every READER_TABLES table and every
 * organization's own table): the embedded analytics copies are taken again on it, whatever the
 * statement's spelling (MERGE, a writable CTE, a function, COPY, TRUNCATE).
 */
export const READER_TABLES_CHANGED = "quarry: reader tables changed";
