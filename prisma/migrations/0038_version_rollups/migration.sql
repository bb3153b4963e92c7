-- The rollups a dashboard version declared when it was published (issue 31): the rollup worker keeps the rollups some
-- dashboard's published version (or a live embed's) declares and removes the others with their rows
-- (lib/rollups/registry.ts pruneRollups). NULL: published before this migration; boot records those from their
-- manifests (lib/dashboards/version-rollups.ts), and until every used version of an organization is recorded, nothing of
-- that organization is removed. The table's row-level security already covers the column.
ALTER TABLE dashboard_versions ADD COLUMN rollup_ids text[];

-- Versions stay immutable (the application may insert and delete them, never rewrite one): this one column may be
-- written, once, from NULL (in the publishing transaction, or by boot for an earlier version).
GRANT UPDATE (rollup_ids) ON dashboard_versions TO quarry_app;

CREATE FUNCTION quarry_rollup_ids_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.rollup_ids IS NOT NULL THEN
    RAISE EXCEPTION 'a dashboard version''s rollups are recorded once';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER dashboard_versions_rollup_ids_once BEFORE UPDATE OF rollup_ids ON dashboard_versions
  FOR EACH ROW EXECUTE FUNCTION quarry_rollup_ids_once();
