-- Indexing is a job (issue 28 §1). A document carries its pending index request beside its index:
-- the request is written in the same transaction as the upload (or the index request), so it is as
-- durable as the file; the pg-boss job that runs it is sent after the commit, and a sweep re-sends
-- it for a request whose job was lost (a crash between the commit and the send, a killed worker).
--   index_job_state: null (never requested) | queued | running | done | failed (dead letter, reason kept)
--   index_request_id: the pending request; a job whose request is no longer pending does nothing,
--     which makes a retried or duplicated job harmless (a document is indexed once per request)
--   index_heartbeat_at: renewed by the running job; a run whose heartbeat lapsed has died
ALTER TABLE documents
  ADD COLUMN index_job_state text CHECK (index_job_state IN ('queued', 'running', 'done', 'failed')),
  ADD COLUMN index_request_id text,
  ADD COLUMN index_request_model text,
  ADD COLUMN index_requested_at timestamptz(3),
  ADD COLUMN index_attempts int NOT NULL DEFAULT 0,
  ADD COLUMN index_next_attempt_at timestamptz(3),
  ADD COLUMN index_heartbeat_at timestamptz(3),
  ADD COLUMN index_job_reason text;
-- The sweep looks for pending requests across organizations (it runs as the owner).
CREATE INDEX documents_index_request_idx ON documents (index_requested_at) WHERE index_request_id IS NOT NULL;
