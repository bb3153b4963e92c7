-- Data pipelines (issue 42 §5, §6; docs/data.md "Pipelines").
--
-- data_ingest_batches: one row per Idempotency-Key a pipeline sent to POST /api/v1/data/tables/{name}/rows. The row is
--   written in the same transaction as the batch's rows, so a batch is either loaded and recorded, or neither: a retry
--   of a recorded key is answered with `result`, never loaded again. body_sha256 tells a retry from a different batch
--   sent under a reused key.
CREATE TABLE data_ingest_batches (
  org_id          text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  idempotency_key text NOT NULL,
  table_name      text NOT NULL,
  body_sha256     text NOT NULL,
  result          jsonb NOT NULL,
  created_by      text NOT NULL,
  created_at      timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, idempotency_key)
);
CREATE INDEX data_ingest_batches_created_idx ON data_ingest_batches (org_id, created_at);

-- data_pulls: a source an organization names (a PostgreSQL query, an object in S3 or GCS, an HTTPS URL) and the table
--   it loads. Everything that lets Quarry reach the source (connection URL, keys, the URL itself, which can carry a
--   token) is sealed in secrets_enc (AES-256-GCM, bound to the organization and pull) and never answered back;
--   `source` holds only what is safe to show (kind, host, bucket, key, format, cursor column).
CREATE TABLE data_pulls (
  id                 text PRIMARY KEY,
  org_id             text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name               text NOT NULL,
  table_name         text NOT NULL,
  kind               text NOT NULL CHECK (kind IN ('postgres', 's3', 'gcs', 'https')),
  source             jsonb NOT NULL,
  secrets_enc        text NOT NULL,
  mode               text NOT NULL CHECK (mode IN ('append', 'replace', 'upsert')),
  key_columns        text[] NOT NULL DEFAULT '{}',
  -- Incremental PostgreSQL pulls: the column rows are ordered by, and the greatest value loaded so far (as text).
  cursor_column      text,
  cursor_value       text,
  -- Five-field cron read in the organization's time zone; NULL: manual only.
  cron               text,
  paused             boolean NOT NULL DEFAULT false,
  -- The last cron occurrence handed to the queue; the scheduler never goes back before it.
  last_scheduled_for timestamptz(3),
  created_by         text NOT NULL,
  created_at         timestamptz(3) NOT NULL DEFAULT now(),
  updated_at         timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (org_id, name)
);

-- One row per occurrence (or "run now"); the unique key keeps two workers from running one occurrence twice.
CREATE TABLE data_pull_runs (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  pull_id       text NOT NULL REFERENCES data_pulls(id) ON DELETE CASCADE,
  scheduled_for timestamptz(3) NOT NULL,
  trigger       text NOT NULL CHECK (trigger IN ('cron', 'manual')),
  status        text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
  attempts      integer NOT NULL DEFAULT 0,
  rows_loaded   bigint NOT NULL DEFAULT 0,
  bytes_read    bigint NOT NULL DEFAULT 0,
  cursor_from   text,
  cursor_to     text,
  error         text,
  created_at    timestamptz(3) NOT NULL DEFAULT now(),
  started_at    timestamptz(3),
  finished_at   timestamptz(3),
  UNIQUE (pull_id, scheduled_for)
);
CREATE INDEX data_pull_runs_pull_idx ON data_pull_runs (org_id, pull_id, created_at DESC);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['data_ingest_batches', 'data_pulls', 'data_pull_runs'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = (SELECT quarry_current_org())) WITH CHECK (org_id = (SELECT quarry_current_org()))', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO quarry_app', t);
  END LOOP;
END $$;

-- A pull's failure reaches the organization's channels through the notification pipeline's fan-out: a delivery
-- belongs to a rule run, a report run (or whatever other origins the constraint allows when this runs), or a pull run.
-- The existing rule is kept as it stands and widened, so origins other migrations add stay intact.
ALTER TABLE notification_deliveries ADD COLUMN pull_run_id text REFERENCES data_pull_runs(id) ON DELETE CASCADE;
DO $$
DECLARE
  existing text;
BEGIN
  SELECT pg_get_constraintdef(oid) INTO STRICT existing FROM pg_constraint
   WHERE conrelid = 'notification_deliveries'::regclass AND conname = 'notification_deliveries_rule_or_report';
  ALTER TABLE notification_deliveries DROP CONSTRAINT notification_deliveries_rule_or_report;
  -- pg_get_constraintdef answers "CHECK (<expression>)".
  EXECUTE format(
    'ALTER TABLE notification_deliveries ADD CONSTRAINT notification_deliveries_rule_or_report CHECK ((pull_run_id IS NULL AND (%s)) OR (pull_run_id IS NOT NULL AND rule_id IS NULL AND run_id IS NULL AND schedule_id IS NULL AND report_run_id IS NULL))',
    substring(existing FROM '^CHECK \((.*)\)$'));
END $$;
CREATE UNIQUE INDEX notification_deliveries_pull_idx ON notification_deliveries (pull_run_id, channel, recipient) WHERE pull_run_id IS NOT NULL;
