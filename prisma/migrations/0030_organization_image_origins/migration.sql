-- Settings an organization's admins keep (issue 26 §7). First: the origins images of the organization's
-- dashboards may load from, besides the app's own origin and data: URLs. They go into img-src of the
-- Content-Security-Policy of its pages (signed-in, embed, public), so an image widget cannot make every
-- embed viewer's browser call a third party the admins did not choose. One row per organization, made on
-- first save; no row means none.
CREATE TABLE organization_settings (
  org_id        text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  image_origins text[] NOT NULL DEFAULT '{}' CHECK (cardinality(image_origins) <= 20),
  updated_by    text,
  updated_at    timestamptz(3) NOT NULL DEFAULT now()
);
ALTER TABLE organization_settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE organization_settings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON organization_settings
  USING (org_id = (SELECT quarry_current_org()))
  WITH CHECK (org_id = (SELECT quarry_current_org()));
GRANT SELECT, INSERT, UPDATE ON organization_settings TO quarry_app;
