-- Foundation: organizations, users, locations, the demo warehouse, and the
-- roles through which tenant work runs (see lib/db/tenant.ts).

CREATE EXTENSION IF NOT EXISTS vector;

-- quarry_app: the role every tenant transaction switches to (SET LOCAL ROLE).
-- quarry_reader: read-only role for user-written SQL (sql widgets, query datasets, KPIs).
-- Neither can bypass row-level security; the connecting role must be a member of both.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'quarry_app') THEN
    CREATE ROLE quarry_app NOLOGIN NOBYPASSRLS;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'quarry_reader') THEN
    CREATE ROLE quarry_reader NOLOGIN NOBYPASSRLS;
  END IF;
  IF NOT pg_has_role(current_user, 'quarry_app', 'MEMBER') THEN
    EXECUTE format('GRANT quarry_app TO %I', current_user);
  END IF;
  IF NOT pg_has_role(current_user, 'quarry_reader', 'MEMBER') THEN
    EXECUTE format('GRANT quarry_reader TO %I', current_user);
  END IF;
END $$;

GRANT USAGE ON SCHEMA public TO quarry_app, quarry_reader;

-- The tenant of the current transaction, or NULL (which matches no row).
CREATE OR REPLACE FUNCTION quarry_current_org() RETURNS text
  LANGUAGE sql STABLE AS $$ SELECT NULLIF(current_setting('app.org_id', true), '') $$;

CREATE TABLE organizations (
  id         text PRIMARY KEY,
  slug       text NOT NULL UNIQUE,
  name       text NOT NULL,
  time_zone  text NOT NULL DEFAULT 'UTC',
  created_at timestamptz(3) NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  email         text NOT NULL UNIQUE,
  name          text NOT NULL,
  role          text NOT NULL CHECK (role IN ('admin', 'general_manager', 'analyst')),
  location_ids  text[] NOT NULL DEFAULT '{}',
  password_hash text NOT NULL,
  created_at    timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX users_org_idx ON users (org_id);

CREATE TABLE locations (
  id         text PRIMARY KEY,
  org_id     text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  code       text NOT NULL,
  name       text NOT NULL,
  city       text NOT NULL,
  region     text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (org_id, code)
);

CREATE TABLE products (
  id         text PRIMARY KEY,
  org_id     text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  sku        text NOT NULL,
  name       text NOT NULL,
  category   text NOT NULL,
  unit_price numeric(12,2) NOT NULL,
  unit_cost  numeric(12,2) NOT NULL
);
CREATE INDEX products_org_idx ON products (org_id);

CREATE TABLE orders (
  id          bigint PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  order_date  date NOT NULL,
  location_id text NOT NULL REFERENCES locations(id),
  product_id  text NOT NULL REFERENCES products(id),
  channel     text NOT NULL,
  customer_id integer NOT NULL,
  quantity    integer NOT NULL,
  amount      numeric(12,2) NOT NULL,
  cost        numeric(12,2) NOT NULL
);
CREATE INDEX orders_org_date_idx ON orders (org_id, order_date);
CREATE INDEX orders_org_location_idx ON orders (org_id, location_id);

CREATE TABLE sales_targets (
  org_id        text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  location_id   text NOT NULL REFERENCES locations(id),
  month         date NOT NULL,
  target_amount numeric(14,2) NOT NULL,
  PRIMARY KEY (org_id, location_id, month)
);

-- Row-level security: enabled and forced on every tenant table, one policy each.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['users', 'locations', 'products', 'orders', 'sales_targets'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = quarry_current_org()) WITH CHECK (org_id = quarry_current_org())', t);
  END LOOP;
END $$;

GRANT SELECT ON organizations TO quarry_app, quarry_reader;
GRANT SELECT, INSERT, UPDATE, DELETE ON users, locations, products, orders, sales_targets TO quarry_app;
GRANT SELECT ON locations, products, orders, sales_targets TO quarry_reader;

-- The organization registry is read by tenants only for their own row.
ALTER TABLE organizations ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_organization ON organizations USING (id = quarry_current_org());

-- Location scope of the current transaction (token claim), NULL meaning every location.
CREATE OR REPLACE FUNCTION quarry_location_scope() RETURNS text[]
  LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN COALESCE(current_setting('app.location_ids', true), '') = '' THEN NULL
                ELSE string_to_array(current_setting('app.location_ids', true), ',') END
  $$;

-- Location-scoped callers see only their locations and those locations' facts.
CREATE POLICY location_scope ON locations AS RESTRICTIVE
  USING (quarry_location_scope() IS NULL OR id = ANY (quarry_location_scope()));
CREATE POLICY location_scope ON orders AS RESTRICTIVE
  USING (quarry_location_scope() IS NULL OR location_id = ANY (quarry_location_scope()));
CREATE POLICY location_scope ON sales_targets AS RESTRICTIVE
  USING (quarry_location_scope() IS NULL OR location_id = ANY (quarry_location_scope()));
