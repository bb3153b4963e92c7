-- An organization's own tables are read by its own reader role alone (issue 42 §3, docs/data.md
-- "Tenancy"). Until now they were granted to quarry_reader, the role every organization's reader
-- work runs as: another organization's statement could name them and was kept out by row-level
-- security and the name check only. Now each organization with tables has a role of its own,
-- quarry_reader_<16 hex digits of sha256('org-tables' NUL org id)> (the hash of its schema's name,
-- lib/db/org-schema.ts), NOLOGIN, a member of quarry_reader (the warehouse) and of nothing else; its
-- tables and its schema are granted to that role, and quarry_reader loses them. Reader work enters
-- the organization's role when the session may (its login on a server, the application's login),
-- else quarry_reader, which reads the warehouse and no organization's tables.

-- The organization's reader role's name; lib/db/org-schema.ts orgReaderRole computes the same
-- (held together by lib/db/reader-login.test.ts).
CREATE OR REPLACE FUNCTION quarry_org_reader_role(org text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT 'quarry_reader_' || left(encode(pg_catalog.sha256(pg_catalog.convert_to('org-tables', 'UTF8') || '\x00'::bytea || pg_catalog.convert_to(org, 'UTF8')), 'hex'), 16) $$;

-- quarry_enter_tenant now answers the role the transaction is to switch to, and signs the settings
-- for that role: for reader work, the organization's own role when it exists and the session's login
-- may become it, else quarry_reader. Same arguments (the embedded engine reads the timeout from the
-- fourth), same refusals; a result type cannot change in place.
DROP FUNCTION quarry_enter_tenant(text, text, text, integer, text);
CREATE FUNCTION quarry_enter_tenant(org text, locations text, tenant_role text, statement_timeout_ms integer, time_zone text)
  RETURNS text
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  AS $$
  DECLARE
    entered text := tenant_role;
    own text;
  BEGIN
    IF current_setting('transaction_read_only') = 'on' THEN
      RAISE EXCEPTION 'the tenant of a transaction is set before it turns read-only' USING ERRCODE = '25006';
    END IF;
    IF COALESCE(org, '') = '' THEN
      RAISE EXCEPTION 'quarry_enter_tenant needs an organization id' USING ERRCODE = '22023';
    END IF;
    IF tenant_role IS NULL OR tenant_role NOT IN ('quarry_app', 'quarry_reader') THEN
      RAISE EXCEPTION 'quarry_enter_tenant: % is not a tenant role', tenant_role USING ERRCODE = '22023';
    END IF;
    IF tenant_role = 'quarry_reader' THEN
      own := public.quarry_org_reader_role(org);
      -- session_user: the login (SECURITY DEFINER changes current_user only). From PostgreSQL 16 a
      -- membership may withhold SET ROLE (a CREATEROLE creator's own grant does): ask for SET there.
      IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = own)
         AND pg_catalog.pg_has_role(session_user, own, CASE WHEN current_setting('server_version_num')::int >= 160000 THEN 'SET' ELSE 'MEMBER' END) THEN
        entered := own;
      END IF;
    END IF;
    PERFORM pg_catalog.set_config('app.org_id', org, true),
            pg_catalog.set_config('app.location_ids', COALESCE(locations, ''), true),
            pg_catalog.set_config('app.tenant_signature', public.quarry_tenant_mac(org, COALESCE(locations, ''), entered), true);
    IF statement_timeout_ms IS NOT NULL THEN
      PERFORM pg_catalog.set_config('statement_timeout', statement_timeout_ms::text, true);
    END IF;
    IF time_zone IS NOT NULL THEN
      PERFORM pg_catalog.set_config('TimeZone', time_zone, true);
    END IF;
    RETURN entered;
  END
  $$;
REVOKE EXECUTE ON FUNCTION quarry_enter_tenant(text, text, text, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION quarry_enter_tenant(text, text, text, integer, text) TO quarry_reader;

-- Existing organizations' tables: their role (made, or found: roles are the server's, shared by its
-- databases), the application's login a member of it, then the grants moved from quarry_reader.
-- Organizations' logins are made members of their role by their next provisioning (lib/db/reader-login.ts).
DO $$
DECLARE
  o record;
  t record;
BEGIN
  FOR o IN
    SELECT n.nspname AS schema, public.quarry_org_reader_role(g.id) AS role
      FROM public.organizations g
      JOIN pg_catalog.pg_namespace n ON n.nspname = 'quarry_data_' || right(public.quarry_org_reader_role(g.id), 16)
  LOOP
    BEGIN
      EXECUTE format('CREATE ROLE %I NOLOGIN INHERIT NOCREATEDB NOCREATEROLE', o.role);
    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
    END;
    EXECUTE format('GRANT quarry_reader TO %I', o.role);
    IF current_setting('server_version_num')::int >= 160000 THEN
      IF NOT pg_has_role(current_user, o.role, 'SET') THEN EXECUTE format('GRANT %I TO %I WITH SET TRUE', o.role, current_user); END IF;
    ELSIF NOT pg_has_role(current_user, o.role, 'MEMBER') THEN
      EXECUTE format('GRANT %I TO %I', o.role, current_user);
    END IF;
    EXECUTE format('REVOKE USAGE ON SCHEMA %I FROM quarry_reader', o.schema);
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', o.schema, o.role);
    FOR t IN SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = o.schema AND c.relkind IN ('r', 'p') LOOP
      EXECUTE format('REVOKE SELECT ON %I.%I FROM quarry_reader', o.schema, t.relname);
      EXECUTE format('GRANT SELECT ON %I.%I TO %I', o.schema, t.relname, o.role);
    END LOOP;
  END LOOP;
END $$;

-- Change detection for the embedded analytics copies (lib/db/analytics-copy.ts, issue 46 §5): every
-- statement that writes a table the reader reads, however it is spelled (MERGE, a writable CTE, a
-- function, COPY, TRUNCATE), tells its client so with this notice, and the copy is taken again before
-- its next use. It replaces matching the statement's text against the table list. The tables are the
-- reader's tables of lib/db/warehouse.ts (READER_TABLES; warehouse.test.ts holds this list to it) and
-- every organization's own table (lib/data/storage.ts adds the trigger as it creates one).
CREATE OR REPLACE FUNCTION quarry_reader_tables_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'quarry: reader tables changed';
  RETURN NULL;
END $$;

DO $$
DECLARE t record;
BEGIN
  FOR t IN
    SELECT n.nspname AS schema, c.relname AS name FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind = 'r' AND ((n.nspname = 'public' AND c.relname IN ('orders', 'locations', 'products', 'sales_targets', 'organizations', 'rollup_rows'))
                                OR n.nspname LIKE 'quarry\_data\_%')
  LOOP
    EXECUTE format('CREATE TRIGGER reader_tables_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I.%I FOR EACH STATEMENT EXECUTE FUNCTION public.quarry_reader_tables_changed()', t.schema, t.name);
  END LOOP;
END $$;
