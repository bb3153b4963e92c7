-- Alerts on what a dashboard widget shows (issue 45, lib/alerts/README.md).
--
-- widget_alerts: one alert on one widget of a dashboard, made in the app or declared under the manifest's `alerts:`
--   (manifest_id, unique per dashboard: a push updates it in place). `definition` is the declaration as
--   lib/manifest/alert.ts validates it (condition, column, filters, per, recipients, ...), read back through the same
--   schema. Addresses of email groups that are no users, Slack and the webhook receive the shared scope (shared_role
--   and shared_location_ids) only once an admin approved it for the published version, as report schedules do.
CREATE TABLE widget_alerts (
  id                      text PRIMARY KEY,
  org_id                  text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  dashboard_id            text NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE,
  manifest_id             text,
  name                    text NOT NULL,
  widget_id               text NOT NULL,
  definition              jsonb NOT NULL,
  cadence_kind            text NOT NULL CHECK (cadence_kind IN ('cron', 'on_data_change')),
  cron                    text,
  muted                   boolean NOT NULL DEFAULT false,
  snoozed_until           timestamptz(3),
  owner_id                text NOT NULL,
  shared_role             text NOT NULL,
  -- Empty: every location.
  shared_location_ids     text[] NOT NULL DEFAULT '{}',
  shared_approved_by      text,
  shared_approved_version integer,
  -- The last cron occurrence evaluated; the scheduler never goes back before it.
  last_scheduled_for      timestamptz(3),
  created_at              timestamptz(3) NOT NULL DEFAULT now(),
  updated_at              timestamptz(3) NOT NULL DEFAULT now(),
  CHECK ((cadence_kind = 'cron') = (cron IS NOT NULL)),
  UNIQUE (dashboard_id, manifest_id)
);
CREATE INDEX widget_alerts_org_idx ON widget_alerts (org_id, created_at DESC, id);
CREATE INDEX widget_alerts_dashboard_idx ON widget_alerts (dashboard_id, widget_id);

-- One state per alert, recipient scope (role:locations) and `per` dimension value ('' without `per`).
-- last_occurrence is the evaluation occurrence that moved it last: a retried occurrence moves nothing again.
CREATE TABLE widget_alert_states (
  id               text PRIMARY KEY,
  org_id           text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  alert_id         text NOT NULL REFERENCES widget_alerts(id) ON DELETE CASCADE,
  scope_key        text NOT NULL,
  dimension_value  text NOT NULL DEFAULT '',
  state            text NOT NULL CHECK (state IN ('ok', 'firing', 'resolved')),
  since            timestamptz(3) NOT NULL,
  last_value       numeric,
  last_evaluated_at timestamptz(3),
  last_notified_at timestamptz(3),
  last_occurrence  text,
  UNIQUE (alert_id, scope_key, dimension_value)
);

-- Every evaluation, append-only (the history chart). occurrence_key is unique for scheduled and data-change
-- evaluations (alert, occurrence, scope, value), so a retried evaluation records nothing twice; tests have none.
CREATE TABLE widget_alert_evaluations (
  id              text PRIMARY KEY,
  org_id          text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  alert_id        text NOT NULL REFERENCES widget_alerts(id) ON DELETE CASCADE,
  occurrence_key  text UNIQUE,
  trigger         text NOT NULL CHECK (trigger IN ('cron', 'data_change', 'test')),
  evaluated_at    timestamptz(3) NOT NULL,
  scope_key       text NOT NULL,
  dimension_value text NOT NULL DEFAULT '',
  value           numeric,
  previous_value  numeric,
  change          numeric,
  threshold       numeric,
  threshold_high  numeric,
  outcome         text NOT NULL CHECK (outcome IN ('met', 'not_met', 'no_data', 'below_min_volume', 'error')),
  met             boolean,
  state           text NOT NULL CHECK (state IN ('ok', 'firing', 'resolved')),
  source          text CHECK (source IN ('rollup', 'base')),
  rollup          text,
  error           text
);
CREATE INDEX widget_alert_evaluations_alert_idx ON widget_alert_evaluations (alert_id, evaluated_at DESC, id);

-- The messages evaluations owe (a transactional outbox): written with the state move they report, under a unique
-- dedupe key; the delivery step claims each once (dispatched_at) and fans it out through the notification pipeline.
CREATE TABLE widget_alert_messages (
  id              text PRIMARY KEY,
  org_id          text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  alert_id        text NOT NULL REFERENCES widget_alerts(id) ON DELETE CASCADE,
  evaluation_id   text NOT NULL REFERENCES widget_alert_evaluations(id) ON DELETE CASCADE,
  dedupe_key      text NOT NULL UNIQUE,
  kind            text NOT NULL CHECK (kind IN ('firing', 'renotify', 'resolved')),
  scope_key       text NOT NULL,
  dimension_value text NOT NULL DEFAULT '',
  targets         jsonb NOT NULL,
  created_at      timestamptz(3) NOT NULL,
  dispatched_at   timestamptz(3)
);
CREATE INDEX widget_alert_messages_pending_idx ON widget_alert_messages (created_at) WHERE dispatched_at IS NULL;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['widget_alerts', 'widget_alert_states', 'widget_alert_evaluations', 'widget_alert_messages'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = (SELECT quarry_current_org())) WITH CHECK (org_id = (SELECT quarry_current_org()))', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO quarry_app', t);
  END LOOP;
END $$;

-- Evaluations are history: the application may add them, never rewrite them (deleting an alert cascades).
REVOKE UPDATE ON widget_alert_evaluations FROM quarry_app;

-- Alert deliveries go through the notification pipeline's one fan-out like rule and report deliveries: a delivery
-- belongs to a rule run, a report run (or whatever other origins the constraint allows when this runs), or an alert
-- message. The existing rule is kept under its name and widened, so origins other migrations add stay intact.
ALTER TABLE notification_deliveries ADD COLUMN alert_message_id text REFERENCES widget_alert_messages(id) ON DELETE CASCADE;
DO $$
DECLARE
  existing text;
BEGIN
  SELECT pg_get_constraintdef(oid) INTO STRICT existing FROM pg_constraint
   WHERE conrelid = 'notification_deliveries'::regclass AND conname = 'notification_deliveries_rule_or_report';
  ALTER TABLE notification_deliveries DROP CONSTRAINT notification_deliveries_rule_or_report;
  -- pg_get_constraintdef answers "CHECK (<expression>)".
  EXECUTE format(
    'ALTER TABLE notification_deliveries ADD CONSTRAINT notification_deliveries_rule_or_report CHECK ((alert_message_id IS NULL AND (%s)) OR (alert_message_id IS NOT NULL AND rule_id IS NULL AND run_id IS NULL AND schedule_id IS NULL AND report_run_id IS NULL))',
    substring(existing FROM '^CHECK \((.*)\)$'));
END $$;
CREATE UNIQUE INDEX notification_deliveries_alert_idx ON notification_deliveries (alert_message_id, channel, recipient) WHERE alert_message_id IS NOT NULL;
