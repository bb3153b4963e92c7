-- An organization's own tables (issue 42, docs/data.md). The catalog below says what each table is;
-- its rows live in a schema of the organization's own (quarry_data_<hash of the org id>, made by
-- lib/data/storage.ts on the first load), each table with org_id and forced row-level security like
-- the warehouse, and the warehouse's change triggers (migration 0036), so a load moves the
-- organization's warehouse version.
--
-- org_tables: one row per table.
--   name:            the stable name datasets and SQL use: a lower-case identifier, unique in the
--                    organization, never a warehouse table's name (checked by lib/data/names.ts)
--   columns:         [{ "name", "type" }] in table order; type is one of lib/data/formats' COLUMN_TYPES
--   key_columns:     the columns an upsert matches on (a unique index), or empty
--   location_column, location_by: the column a location-limited caller is filtered on, holding a
--                    location's id or its code; both null when the table has none
CREATE TABLE org_tables (
  org_id          text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name            text NOT NULL CHECK (name ~ '^[a-z_][a-z0-9_]{0,62}$'),
  columns         jsonb NOT NULL,
  key_columns     text[] NOT NULL DEFAULT '{}',
  location_column text,
  location_by     text CHECK (location_by IN ('id', 'code')),
  row_count       bigint NOT NULL DEFAULT 0,
  bytes           bigint NOT NULL DEFAULT 0,
  last_load_at    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CHECK ((location_column IS NULL) = (location_by IS NULL)),
  PRIMARY KEY (org_id, name)
);

-- org_table_loads: the load history (kept when the table is dropped: what was loaded, by whom).
--   state: running, done, failed (error says why); rows_skipped counts rows refused with onBadRow "skip"
CREATE TABLE org_table_loads (
  org_id        text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id            text NOT NULL,
  table_name    text NOT NULL,
  mode          text NOT NULL CHECK (mode IN ('create', 'append', 'replace', 'upsert')),
  state         text NOT NULL CHECK (state IN ('running', 'done', 'failed')),
  rows_loaded   bigint NOT NULL DEFAULT 0,
  rows_skipped  bigint NOT NULL DEFAULT 0,
  bytes         bigint NOT NULL DEFAULT 0,
  error         text,
  actor         text,
  started_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz,
  PRIMARY KEY (org_id, id)
);
CREATE INDEX org_table_loads_table_idx ON org_table_loads (org_id, table_name, started_at DESC);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['org_tables', 'org_table_loads'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = (SELECT quarry_current_org())) WITH CHECK (org_id = (SELECT quarry_current_org()))', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO quarry_app', t);
  END LOOP;
END $$;
