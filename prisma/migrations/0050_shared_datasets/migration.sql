-- Shared datasets and the metrics catalog (issue 48 §1-3, docs/shared-datasets.md).
--
-- shared_datasets: one `kind: dataset` manifest per organization and dataset id (what dashboards name with
--   `datasets: [{ ref: <id> }]`). spec_yaml is the manifest as pushed; version counts the definitions it had (each
--   change writes a row of shared_dataset_versions). A push is live at once: the plan shows its impact first.
-- shared_dataset_versions: every definition a dataset had, append-only (history and the before/after of a plan).
-- metric_certifications: an admin's mark on one metric of one dataset, for the definition it had then
--   (definition_hash). A push that changes the metric's definition deletes the mark in the same transaction.
CREATE TABLE shared_datasets (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  dataset_id  text NOT NULL,
  name        text NOT NULL,
  owner       text,
  spec_yaml   text NOT NULL,
  version     integer NOT NULL,
  updated_by  text NOT NULL,
  created_at  timestamptz(3) NOT NULL DEFAULT now(),
  updated_at  timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (org_id, dataset_id)
);

CREATE TABLE shared_dataset_versions (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  shared_dataset_id text NOT NULL REFERENCES shared_datasets(id) ON DELETE CASCADE,
  version     integer NOT NULL,
  spec_yaml   text NOT NULL,
  message     text,
  created_by  text NOT NULL,
  created_at  timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (shared_dataset_id, version)
);

CREATE TABLE metric_certifications (
  id                text PRIMARY KEY,
  org_id            text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  shared_dataset_id text NOT NULL REFERENCES shared_datasets(id) ON DELETE CASCADE,
  metric_id         text NOT NULL,
  definition_hash   text NOT NULL,
  certified_by      text NOT NULL,
  certified_at      timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (shared_dataset_id, metric_id)
);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['shared_datasets', 'shared_dataset_versions', 'metric_certifications'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = (SELECT quarry_current_org())) WITH CHECK (org_id = (SELECT quarry_current_org()))', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO quarry_app', t);
  END LOOP;
END $$;

-- Versions are history: the application adds them, never rewrites them (deleting the dataset cascades).
REVOKE UPDATE ON shared_dataset_versions FROM quarry_app;
