-- Issue 28 §1: whether an upload queues the file's indexing, per organization (default on). An upload's
-- ?index=true|false overrides it for that file.
ALTER TABLE organization_settings ADD COLUMN index_on_upload boolean NOT NULL DEFAULT true;
