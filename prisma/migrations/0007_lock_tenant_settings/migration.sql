-- The tenant of a transaction lives in the app.org_id setting. User-written SQL
-- (sql widgets, query datasets) runs as quarry_reader; if it could call
-- set_config it could move its own transaction to another tenant. withTenant
-- sets every setting before switching role, so the tenant roles never need it.
-- (The SET command cannot appear inside the single statement user SQL may be.)
REVOKE EXECUTE ON FUNCTION pg_catalog.set_config(text, text, boolean) FROM PUBLIC;
DO $$
BEGIN
  EXECUTE format('GRANT EXECUTE ON FUNCTION pg_catalog.set_config(text, text, boolean) TO %I', current_user);
  IF has_function_privilege('quarry_reader', 'pg_catalog.set_config(text, text, boolean)', 'EXECUTE')
     OR has_function_privilege('quarry_app', 'pg_catalog.set_config(text, text, boolean)', 'EXECUTE') THEN
    RAISE WARNING 'set_config is still executable by the tenant roles: run this migration as a superuser (the function belongs to the bootstrap superuser)';
  END IF;
END $$;
