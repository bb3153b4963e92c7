-- Signed tenant settings. Row-level security reads the tenant of a transaction from the settings
-- app.org_id and app.location_ids. Migration 0007 revokes set_config from the tenant roles, but
-- only the function's owner (the bootstrap superuser) can: on a managed PostgreSQL the revoke is a
-- no-op and a statement running as quarry_reader could set app.org_id to another organization and
-- read its rows (lib/db/tenant-forgery.test.ts). Now the tenant functions believe the settings only
-- when app.tenant_signature holds an HMAC-SHA-256 of them, of the role the transaction switched to
-- and of this transaction (backend pid and start time), under a key in a table no tenant role can
-- read. The one writer of signed settings, quarry_enter_tenant(), refuses read-only transactions,
-- and withTenant calls it before it makes a transaction read-only, so user SQL (always read-only)
-- cannot sign a setting of its own either. docs/security.md, "Managed PostgreSQL".

CREATE TABLE quarry_tenant_key (
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  inner_pad  bytea NOT NULL,
  outer_pad  bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- Read by the SECURITY DEFINER functions below (as their owner) and by nobody else.
REVOKE ALL ON quarry_tenant_key FROM PUBLIC;

-- HMAC's padded keys (RFC 2104), from a 64-byte random key (gen_random_uuid: the server's strong
-- random source; four of them give 488 random bits).
DO $$
DECLARE
  k bytea := decode(replace(gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');
  ipad bytea := k;
  opad bytea := k;
BEGIN
  FOR i IN 0 .. length(k) - 1 LOOP
    ipad := set_byte(ipad, i, get_byte(k, i) # 54);   -- 0x36
    opad := set_byte(opad, i, get_byte(k, i) # 92);   -- 0x5c
  END LOOP;
  INSERT INTO quarry_tenant_key (inner_pad, outer_pad) VALUES (ipad, opad);
END $$;

-- The signature of the settings for this transaction, as the given role. Not executable by the
-- tenant roles (it would sign anything); the functions below call it as its owner.
CREATE OR REPLACE FUNCTION quarry_tenant_mac(org text, locations text, tenant_role text) RETURNS text
  LANGUAGE plpgsql STABLE SECURITY DEFINER
  AS $$
  DECLARE
    k public.quarry_tenant_key;
  BEGIN
    SELECT * INTO k FROM public.quarry_tenant_key;
    RETURN encode(pg_catalog.sha256(k.outer_pad || pg_catalog.sha256(k.inner_pad || pg_catalog.convert_to(
             concat_ws(chr(31), org, locations, tenant_role, pg_catalog.pg_backend_pid()::text,
                       to_char(pg_catalog.transaction_timestamp() AT TIME ZONE 'UTC', 'YYYYMMDDHH24MISSUS')),
             'UTF8'))), 'hex');
  END
  $$;
REVOKE EXECUTE ON FUNCTION quarry_tenant_mac(text, text, text) FROM PUBLIC;

-- Whether the tenant settings of this transaction were written by quarry_enter_tenant for the role
-- the transaction runs as now (a statement that switches role with set_config('role', …) loses them).
CREATE OR REPLACE FUNCTION quarry_tenant_verified() RETURNS boolean
  LANGUAGE plpgsql STABLE SECURITY DEFINER
  AS $$
  DECLARE
    signature text := current_setting('app.tenant_signature', true);
  BEGIN
    RETURN COALESCE(signature, '') <> '' AND signature = public.quarry_tenant_mac(
             COALESCE(current_setting('app.org_id', true), ''),
             COALESCE(current_setting('app.location_ids', true), ''),
             current_setting('role'));
  END
  $$;
REVOKE EXECUTE ON FUNCTION quarry_tenant_verified() FROM PUBLIC;

-- Same names, same results for signed settings (policies keep their InitPlan shape, migration 0010);
-- unsigned or forged settings give no organization and an empty location scope (no rows).
-- PL/pgSQL rather than SQL: cached plans make each call about three times cheaper (measured on
-- PostgreSQL 15: ~0.15 ms more per statement than the unsigned functions, where SQL cost ~0.5 ms).
CREATE OR REPLACE FUNCTION quarry_current_org() RETURNS text
  LANGUAGE plpgsql STABLE SECURITY DEFINER
  AS $$
  BEGIN
    IF public.quarry_tenant_verified() THEN
      RETURN NULLIF(current_setting('app.org_id', true), '');
    END IF;
    RETURN NULL;
  END
  $$;

CREATE OR REPLACE FUNCTION quarry_location_scope() RETURNS text[]
  LANGUAGE plpgsql STABLE SECURITY DEFINER
  AS $$
  BEGIN
    IF NOT public.quarry_tenant_verified() THEN
      RETURN '{}'::text[];
    END IF;
    IF COALESCE(current_setting('app.location_ids', true), '') = '' THEN
      RETURN NULL;
    END IF;
    RETURN string_to_array(current_setting('app.location_ids', true), ',');
  END
  $$;

-- The one writer of tenant settings: called by withTenant (and the bulk path) before SET LOCAL
-- ROLE, with the role it is about to take, and with the transaction's statement timeout and time
-- zone, so those need no set_config of the caller's either. Refuses a read-only transaction: user
-- SQL always runs in one, so it cannot sign settings of its choosing even as the login role.
CREATE OR REPLACE FUNCTION quarry_enter_tenant(org text, locations text, tenant_role text, statement_timeout_ms integer, time_zone text)
  RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  AS $$
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
    PERFORM pg_catalog.set_config('app.org_id', org, true),
            pg_catalog.set_config('app.location_ids', COALESCE(locations, ''), true),
            pg_catalog.set_config('app.tenant_signature', public.quarry_tenant_mac(org, COALESCE(locations, ''), tenant_role), true);
    IF statement_timeout_ms IS NOT NULL THEN
      PERFORM pg_catalog.set_config('statement_timeout', statement_timeout_ms::text, true);
    END IF;
    IF time_zone IS NOT NULL THEN
      PERFORM pg_catalog.set_config('TimeZone', time_zone, true);
    END IF;
  END
  $$;
REVOKE EXECUTE ON FUNCTION quarry_enter_tenant(text, text, text, integer, text) FROM PUBLIC;
-- A deployment may run user SQL on a login role that is only a member of quarry_reader
-- (QUARRY_READER_DATABASE_URL, docs/deploy.md); that login enters its tenant with this function.
GRANT EXECUTE ON FUNCTION quarry_enter_tenant(text, text, text, integer, text) TO quarry_reader;
