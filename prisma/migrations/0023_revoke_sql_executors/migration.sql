-- Defence in depth under the parser-based allow-list (lib/query/sql-allow-list.ts): built-ins that
-- run SQL text of their own, out of any checker's sight, are taken from the tenant roles.
-- * query_to_xml and the other *_to_xml / *_to_xmlschema functions: run a query (or read a whole
--   table, schema or database) given as text or a cursor.
-- * ts_stat(text[, text]) and ts_rewrite(tsquery, text): run the query in their text argument.
-- The owners keep them (the migrating user and the database's owner). As in migration 0009, only
-- the functions' owner, the bootstrap superuser, can revoke these: migrated by a non-superuser
-- (a managed server) this warns and changes nothing; there user SQL runs on a login that cannot
-- leave the reader role (lib/db/reader-login.ts), which is the wall that holds.
DO $$
DECLARE
  fn regprocedure;
  owner text := (SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database());
BEGIN
  FOR fn IN
    SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = 'pg_catalog'
       AND (p.proname ~ '^(query|cursor|table|schema|database)_to_xml' OR p.proname = 'ts_stat'
            OR p.oid = 'pg_catalog.ts_rewrite(tsquery, text)'::regprocedure)
  LOOP
    BEGIN
      EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC, quarry_app, quarry_reader', fn);
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I, %I', fn, current_user, owner);
    EXCEPTION WHEN insufficient_privilege THEN
      NULL;
    END;
    IF has_function_privilege('quarry_reader', fn, 'EXECUTE') THEN
      RAISE WARNING '% is still executable by quarry_reader: run this migration as a superuser (the function belongs to the bootstrap superuser)', fn;
    END IF;
  END LOOP;
END $$;
