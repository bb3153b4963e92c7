-- Rollups (issue 31 §2, docs/rollups.md): pre-aggregations the engine builds from the warehouse and
-- answers dashboard widgets from when they give exactly the tables' answer.
--
-- warehouse_versions: one counter per organization, bumped by every statement that writes a
-- warehouse table (orders, products, locations, sales_targets) through the triggers below. A rollup
-- records the counter it was built at; it answers queries only while the counter has not moved, so
-- a rollup never answers with rows older than the tables (the base tables answer until the worker
-- has refreshed it).
CREATE TABLE warehouse_versions (
  org_id     text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  version    bigint NOT NULL DEFAULT 1,
  changed_at timestamptz NOT NULL DEFAULT now()
);

-- rollups: one row per organization and rollup definition (id: a hash of its content, so a
-- definition shared by several dashboards or versions is built once).
--   state:          pending (declared, never built), ready, failed (error says why)
--   column_types:   the SQL type of each dimension and measure as the source gives it, so rollup
--                   rows are read back as the same types (filters compare as on the tables)
--   built_version:  the warehouse_versions counter the rows reflect; time_zone: the zone its days
--                   were cut in (the organization's)
CREATE TABLE rollups (
  org_id        text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  id            text NOT NULL,
  name          text NOT NULL,
  definition    jsonb NOT NULL,
  state         text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'ready', 'failed')),
  error         text,
  column_types  jsonb,
  time_zone     text,
  built_version bigint,
  built_at      timestamptz,
  row_count     integer,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, id)
);

-- rollup_days: a fingerprint (md5 of the bucket's aggregated rows) per time bucket, so a refresh
-- rewrites only the buckets whose aggregate changed (new and changed days).
CREATE TABLE rollup_days (
  org_id      text NOT NULL,
  rollup_id   text NOT NULL,
  bucket      date NOT NULL,
  fingerprint text NOT NULL,
  PRIMARY KEY (org_id, rollup_id, bucket),
  FOREIGN KEY (org_id, rollup_id) REFERENCES rollups (org_id, id) ON DELETE CASCADE
);

-- rollup_rows: the aggregated rows. key holds the dimensions, measures the partial aggregates
-- (jsonb numbers are numeric: sums stay exact); location_id carries the row's location so the
-- location scope applies as it does on orders.
CREATE TABLE rollup_rows (
  org_id      text NOT NULL,
  rollup_id   text NOT NULL,
  location_id text,
  bucket      date NOT NULL,
  key         jsonb NOT NULL,
  measures    jsonb NOT NULL,
  FOREIGN KEY (org_id, rollup_id) REFERENCES rollups (org_id, id) ON DELETE CASCADE
);
CREATE INDEX rollup_rows_bucket_idx ON rollup_rows (org_id, rollup_id, bucket);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['warehouse_versions', 'rollups', 'rollup_days', 'rollup_rows'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = (SELECT quarry_current_org())) WITH CHECK (org_id = (SELECT quarry_current_org()))', t);
  END LOOP;
END $$;

-- A location-scoped caller sees only its locations' rollup rows, as on orders. Rows without a
-- location come from sources that read no location-scoped table (save-time validation requires a
-- location dimension otherwise), which every caller of the organization sees in full.
CREATE POLICY location_scope ON rollup_rows AS RESTRICTIVE
  USING (location_id IS NULL OR (SELECT quarry_location_scope()) IS NULL OR location_id = ANY ((SELECT quarry_location_scope())::text[]));

GRANT SELECT, INSERT, UPDATE, DELETE ON warehouse_versions, rollups, rollup_days, rollup_rows TO quarry_app;
-- Widgets' statements run as the reader; rollup rows are aggregates of tables it reads already.
GRANT SELECT ON rollup_rows TO quarry_reader;

-- Every statement writing a warehouse table bumps the counter of each organization it touched.
CREATE FUNCTION quarry_warehouse_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO warehouse_versions AS w (org_id, version, changed_at)
    -- An organization being deleted (its rows go by cascade) has nothing left to count.
    SELECT DISTINCT c.org_id, 1, now() FROM changed_rows c WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = c.org_id)
  ON CONFLICT (org_id) DO UPDATE SET version = w.version + 1, changed_at = now();
  RETURN NULL;
END $$;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['orders', 'products', 'locations', 'sales_targets'] LOOP
    EXECUTE format('CREATE TRIGGER warehouse_inserted AFTER INSERT ON %I REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION quarry_warehouse_changed()', t);
    EXECUTE format('CREATE TRIGGER warehouse_updated AFTER UPDATE ON %I REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION quarry_warehouse_changed()', t);
    EXECUTE format('CREATE TRIGGER warehouse_deleted AFTER DELETE ON %I REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION quarry_warehouse_changed()', t);
  END LOOP;
END $$;

-- Organizations seeded before this migration start at version 1.
INSERT INTO warehouse_versions (org_id) SELECT id FROM organizations ON CONFLICT DO NOTHING;
