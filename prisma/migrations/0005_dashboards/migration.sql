-- Dashboards: an editable draft, immutable published versions, and embed grants.

CREATE TABLE dashboards (
  id                text PRIMARY KEY,
  org_id            text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name              text NOT NULL,
  slug              text NOT NULL,
  draft_yaml        text NOT NULL,
  draft_revision    integer NOT NULL DEFAULT 1,
  published_version integer,
  created_by        text NOT NULL,
  updated_by        text NOT NULL,
  created_at        timestamptz(3) NOT NULL DEFAULT now(),
  updated_at        timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (org_id, slug)
);

-- A published version never changes: the app role may insert and read, not update.
CREATE TABLE dashboard_versions (
  org_id       text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  dashboard_id text NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE,
  version      integer NOT NULL,
  name         text NOT NULL,
  spec_yaml    text NOT NULL,
  published_by text NOT NULL,
  published_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (dashboard_id, version)
);

CREATE TABLE dashboard_embeds (
  id              text PRIMARY KEY,
  org_id          text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  dashboard_id    text NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE,
  version         integer NOT NULL,
  locked_filters  jsonb NOT NULL DEFAULT '{}',
  allowed_origins text[] NOT NULL DEFAULT '{}',
  expires_at      timestamptz(3) NOT NULL,
  revoked_at      timestamptz(3),
  created_by      text NOT NULL,
  created_at      timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_embeds_dashboard_idx ON dashboard_embeds (dashboard_id);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['dashboards', 'dashboard_versions', 'dashboard_embeds'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = quarry_current_org()) WITH CHECK (org_id = quarry_current_org())', t);
  END LOOP;
END $$;

GRANT SELECT, INSERT, UPDATE, DELETE ON dashboards, dashboard_embeds TO quarry_app;
GRANT SELECT, INSERT, DELETE ON dashboard_versions TO quarry_app;
