-- Row-level security at no per-row cost. A policy written `org_id = quarry_current_org()`
-- calls the function once for every row it filters (2.2x on an aggregate over orders in
-- PostgreSQL 15). Written as a scalar subquery, `org_id = (SELECT quarry_current_org())`, the
-- planner evaluates it once per statement (an InitPlan) and compares a constant, so an index on
-- org_id can be used as well. The location array is cast (`::text[]`) so that `= ANY (…)` reads
-- it as an array, not as a subquery's rows. This rewrites every existing policy in the schema that calls
-- quarry_current_org() or quarry_location_scope() directly; docs/conventions.md gives the
-- template for new ones, and lib/db/rls-initplan.test.ts fails on any policy that does not follow it.
DO $$
DECLARE
  p record;
  qual text;
  check_expr text;
  statement text;
BEGIN
  FOR p IN SELECT schemaname, tablename, policyname, pg_policies.qual, with_check FROM pg_policies WHERE schemaname = current_schema() LOOP
    qual := regexp_replace(regexp_replace(p.qual,
      '(?<!SELECT )quarry_current_org\(\)', '(SELECT quarry_current_org())', 'g'),
      '(?<!SELECT )quarry_location_scope\(\)', '(SELECT quarry_location_scope())::text[]', 'g');
    check_expr := regexp_replace(regexp_replace(p.with_check,
      '(?<!SELECT )quarry_current_org\(\)', '(SELECT quarry_current_org())', 'g'),
      '(?<!SELECT )quarry_location_scope\(\)', '(SELECT quarry_location_scope())::text[]', 'g');
    IF qual IS DISTINCT FROM p.qual OR check_expr IS DISTINCT FROM p.with_check THEN
      statement := format('ALTER POLICY %I ON %I.%I', p.policyname, p.schemaname, p.tablename);
      IF qual IS NOT NULL THEN statement := statement || format(' USING (%s)', qual); END IF;
      IF check_expr IS NOT NULL THEN statement := statement || format(' WITH CHECK (%s)', check_expr); END IF;
      EXECUTE statement;
    END IF;
  END LOOP;
END $$;
