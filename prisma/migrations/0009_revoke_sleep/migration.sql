-- Built-ins that let tenant SQL hold a connection without doing work. User SQL runs as
-- quarry_reader and names of functions can be spelled past the lexer (U&"pg\005fsleep"), so the
-- privilege is what refuses them:
-- * pg_sleep, pg_sleep_for, pg_sleep_until: wait for as long as asked.
-- * session-level advisory locks (pg_advisory_lock*, pg_try_advisory_lock*): outlive the
--   transaction on a pooled connection, so one tenant's lock would block another's request.
--   (pg_advisory_xact_lock stays: it ends with the transaction, and pg-boss uses it.)
-- The owners keep them (the migrating user and the database's owner, the login role of the app):
-- start-up locking runs as the owner. Only the functions' owner, the bootstrap superuser, can
-- revoke these: migrated by a non-superuser this warns and changes nothing, and PostgreSQL's own
-- statement_timeout still bounds a sleep (docs/embedded-engine.md).
DO $$
DECLARE
  fn text;
  owner text := (SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database());
BEGIN
  FOREACH fn IN ARRAY ARRAY[
    'pg_catalog.pg_sleep(double precision)',
    'pg_catalog.pg_sleep_for(interval)',
    'pg_catalog.pg_sleep_until(timestamp with time zone)',
    'pg_catalog.pg_advisory_lock(bigint)',
    'pg_catalog.pg_advisory_lock(integer, integer)',
    'pg_catalog.pg_advisory_lock_shared(bigint)',
    'pg_catalog.pg_advisory_lock_shared(integer, integer)',
    'pg_catalog.pg_try_advisory_lock(bigint)',
    'pg_catalog.pg_try_advisory_lock(integer, integer)',
    'pg_catalog.pg_try_advisory_lock_shared(bigint)',
    'pg_catalog.pg_try_advisory_lock_shared(integer, integer)'
  ] LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC, quarry_app, quarry_reader', fn);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I, %I', fn, current_user, owner);
    IF has_function_privilege('quarry_reader', fn, 'EXECUTE') OR has_function_privilege('quarry_app', fn, 'EXECUTE') THEN
      RAISE WARNING '% is still executable by the tenant roles: run this migration as a superuser (the function belongs to the bootstrap superuser)', fn;
    END IF;
  END LOOP;
END $$;
