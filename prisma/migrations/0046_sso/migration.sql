-- Single sign-on with OpenID Connect, one provider per organization (issue 43 §4, lib/sso).
--
-- The client secret is sealed with AES-256-GCM under a key derived from the application secret, bound to
-- the organization (lib/notifications/settings/channel-secrets.ts); it is never answered back.
CREATE TABLE sso_settings (
  org_id                text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  issuer_url            text NOT NULL,
  client_id             text NOT NULL,
  client_secret_enc     text NOT NULL,
  -- the ID token claim whose value (a string or a list of strings) picks the role mapping
  role_claim            text NOT NULL DEFAULT 'groups',
  -- [{ "value": "quarry-admins", "role": "admin", "location_ids": [] }, …]
  role_mappings         jsonb NOT NULL DEFAULT '[]',
  -- the role of a member whose claim matches no mapping; null: such a sign-in is refused
  default_role          text CHECK (default_role IN ('admin', 'general_manager', 'analyst')),
  sso_only              boolean NOT NULL DEFAULT false,
  -- admins who keep signing in with a password when sso_only is on
  break_glass_user_ids  text[] NOT NULL DEFAULT '{}',
  enabled               boolean NOT NULL DEFAULT true,
  updated_at            timestamptz(3) NOT NULL DEFAULT now()
);

-- The organization's verified e-mail domains: a domain belongs to one organization of the install (its
-- primary key), so an address's domain names at most one provider and just-in-time accounts are made in
-- that organization only.
CREATE TABLE sso_domains (
  domain text PRIMARY KEY CHECK (domain = lower(domain)),
  org_id text NOT NULL REFERENCES sso_settings(org_id) ON DELETE CASCADE
);
CREATE INDEX sso_domains_org_idx ON sso_domains (org_id);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['sso_settings', 'sso_domains'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = (SELECT quarry_current_org())) WITH CHECK (org_id = (SELECT quarry_current_org()))', t);
  END LOOP;
END $$;
GRANT SELECT, INSERT, UPDATE, DELETE ON sso_settings, sso_domains TO quarry_app;
