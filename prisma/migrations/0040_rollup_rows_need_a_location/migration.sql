-- Rollup rows without a location are no longer readable by a caller limited to some locations (issue 41 §4,
-- docs/rollups.md "Scope"). 0036 let every caller read rows whose location_id is NULL, meaning "from a source that
-- reads no location-scoped table"; but a build reads the whole organization, so a row without a location proves
-- nothing about what it holds. A scoped caller now reads only rows filed under one of its locations; callers that see
-- every location read every row, as before. Routing (lib/rollups/registry.ts freshRollups) offers a scoped caller only
-- rollups with a location dimension, so the tables answer it, under row-level security, for the others.
DROP POLICY location_scope ON rollup_rows;
CREATE POLICY location_scope ON rollup_rows AS RESTRICTIVE
  USING ((SELECT quarry_location_scope()) IS NULL OR location_id = ANY ((SELECT quarry_location_scope())::text[]));

-- Rollups built before the scope rule (lib/query/rollup-scope.ts) may hold rows filed under one location that hold
-- others' (a location dimension over a cross join, a dimension that is a subquery), and user SQL may read rollup_rows
-- directly. So nothing built before it is kept: every rollup is pending again, and the worker builds those that pass
-- the rule (a query that finds one pending asks for it; the tables answer meanwhile) and marks the others failed.
DELETE FROM rollup_rows;
DELETE FROM rollup_days;
UPDATE rollups SET state = 'pending', error = NULL, built_version = NULL, built_at = NULL, row_count = NULL;
