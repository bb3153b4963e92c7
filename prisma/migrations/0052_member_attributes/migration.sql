-- Member attributes (issue 48 §4, docs/datasets.md "Field policies"): what a dataset's field policy may ask
-- of a viewer besides a role, e.g. {"region": ["eu"]}. An object of attribute name -> list of text values,
-- edited by organization admins through /api/v1/members; users keeps its row-level security and grants.
ALTER TABLE users ADD COLUMN attributes jsonb NOT NULL DEFAULT '{}'::jsonb
  CHECK (jsonb_typeof(attributes) = 'object');
