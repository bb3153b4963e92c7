-- Version history (issue 30 §2): what a published version says about itself. A version stays
-- immutable (quarry_app may insert and read dashboard_versions, never update): these are written
-- once, with the version.
--   message:       the publisher's note (a commit message, "restore version 3", …); null when none
--   source:        where the manifest came from, as the publisher declared it, e.g.
--                  {"repository": "acme/dashboards", "commit": "9f1c…", "ref": "refs/heads/main",
--                   "path": "dashboards/sales.yaml", "run_url": "https://…"}; null when none
--   restored_from: the version this one re-publishes when it was made by a restore; null otherwise
-- published_by already holds a user id or an API key id (apk_…); the list resolves either to a name.
ALTER TABLE dashboard_versions
  ADD COLUMN message       text,
  ADD COLUMN source        jsonb,
  ADD COLUMN restored_from integer;
