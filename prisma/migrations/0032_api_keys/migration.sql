-- Organization API keys (issue 30 §1). A key is `qk_<public id>_<secret>`; the row keeps only an
-- HMAC-SHA-256 of the whole key under a key derived from the application secret (lib/auth/api-keys.ts),
-- never the secret. The key's id is `apk_<public id>`. A revoked key keeps its row (who made it, when it
-- was last used, when and by whom it was revoked) and is refused from the next request on, on every
-- replica: each request reads the row (lib/auth/directory.ts findApiKey), nothing is cached.
--   scopes: what the key may do (lib/auth/api-key-scopes.ts)
--   location_ids: null = every location of the organization, else a non-empty subset of them
CREATE TABLE api_keys (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name         text NOT NULL,
  secret_hash  bytea NOT NULL,
  scopes       text[] NOT NULL,
  location_ids text[],
  expires_at   timestamptz(3),
  created_by   text NOT NULL,
  created_at   timestamptz(3) NOT NULL DEFAULT now(),
  last_used_at timestamptz(3),
  revoked_at   timestamptz(3),
  revoked_by   text,
  CHECK (cardinality(scopes) > 0),
  CHECK (location_ids IS NULL OR cardinality(location_ids) > 0)
);
CREATE INDEX api_keys_org_created_idx ON api_keys (org_id, created_at DESC, id DESC);

ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE api_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON api_keys
  USING (org_id = (SELECT quarry_current_org()))
  WITH CHECK (org_id = (SELECT quarry_current_org()));
GRANT SELECT, INSERT, UPDATE ON api_keys TO quarry_app;
