-- Built-ins that let tenant SQL hold a connection without doing work. User SQL runs as
-- quarry_reader and names of functions can be spelled past the lexer (U&"pg\005fsleep"), so the
-- privilege is what refuses them:
-- * pg_sleep, pg_sleep_for, pg_sleep_until: wait for as long as asked.
-- * session-level advisory locks (pg_advisory_lock*, pg_try_advisory_lock*): outlive the
--   transaction on a pooled connection, so one tenant's lock would block another's request.
--   (pg_advisory_xact_lock stays: it ends with the transaction, and pg-boss uses it.)
-- The owner (the migrating user) keeps them: start-up locking runs as the owner.
DO $$
DECLARE
  fn text;
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
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', fn, current_user);
    IF has_function_privilege('quarry_reader', fn, 'EXECUTE') OR has_function_privilege('quarry_app', fn, 'EXECUTE') THEN
      RAISE WARNING '% is still executable by the tenant roles: run this migration as a superuser (the function belongs to the bootstrap superuser)', fn;
    END IF;
  END LOOP;
END $$;
