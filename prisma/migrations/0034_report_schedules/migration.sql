-- Scheduled dashboard reports (issue 29 §3, docs/reports.md "Scheduled reports").
--
-- report_schedules: what to send (a dashboard, its filter values, formats), when (cron in a time zone) and to whom.
--   user_ids: members of the organization; each receives the report rendered in their own role and location scope.
--   addresses: e-mail addresses that are not (or not known as) users: they, and the Slack channel and webhook,
--   receive the "shared" render (shared_role + shared_location_ids, chosen by the creator within their own scope),
--   and only once an admin approved that (shared_approved_by), and for addresses only in the organization's
--   report_allowed_domains.
CREATE TABLE report_schedules (
  id                  text PRIMARY KEY,
  org_id              text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  dashboard_id        text NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE,
  name                text NOT NULL,
  cron                text NOT NULL,
  time_zone           text NOT NULL,
  formats             text[] NOT NULL CHECK (cardinality(formats) > 0),
  filters             jsonb NOT NULL DEFAULT '{}',
  -- Renderer options: paper, orientation, tab, width.
  options             jsonb NOT NULL DEFAULT '{}',
  channels            text[] NOT NULL CHECK (cardinality(channels) > 0),
  user_ids            text[] NOT NULL DEFAULT '{}',
  addresses           text[] NOT NULL DEFAULT '{}',
  shared_role         text NOT NULL,
  -- Empty: every location.
  shared_location_ids text[] NOT NULL DEFAULT '{}',
  shared_approved_by  text,
  shared_approved_at  timestamptz(3),
  paused              boolean NOT NULL DEFAULT false,
  -- The last cron occurrence handed to the queue; the scheduler never goes back before it.
  last_scheduled_for  timestamptz(3),
  created_by          text NOT NULL,
  updated_by          text NOT NULL,
  created_at          timestamptz(3) NOT NULL DEFAULT now(),
  updated_at          timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX report_schedules_org_idx ON report_schedules (org_id, created_at DESC, id);

-- One row per occurrence (or "send now"); the unique key keeps two workers from running one occurrence twice.
CREATE TABLE report_runs (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  schedule_id   text NOT NULL REFERENCES report_schedules(id) ON DELETE CASCADE,
  scheduled_for timestamptz(3) NOT NULL,
  trigger       text NOT NULL CHECK (trigger IN ('cron', 'manual')),
  status        text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'error')),
  renders       integer NOT NULL DEFAULT 0,
  error         text,
  created_at    timestamptz(3) NOT NULL DEFAULT now(),
  finished_at   timestamptz(3),
  UNIQUE (schedule_id, scheduled_for)
);

-- One rendered file per run, scope and format: what attachments and signed links serve. scope_key names the
-- role and locations it was rendered for; a signed link names the file, so it never reads another scope's.
CREATE TABLE report_files (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  run_id       text NOT NULL REFERENCES report_runs(id) ON DELETE CASCADE,
  scope_key    text NOT NULL,
  format       text NOT NULL CHECK (format IN ('pdf', 'png')),
  content_type text NOT NULL,
  filename     text NOT NULL,
  bytes        bytea NOT NULL,
  pages        integer NOT NULL,
  created_at   timestamptz(3) NOT NULL DEFAULT now(),
  expires_at   timestamptz(3) NOT NULL,
  UNIQUE (run_id, scope_key, format)
);

-- Recipients who used a report e-mail's one-click unsubscribe (or an admin for them).
CREATE TABLE report_unsubscribes (
  org_id      text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  schedule_id text NOT NULL REFERENCES report_schedules(id) ON DELETE CASCADE,
  -- A user id or a lower-cased address.
  recipient   text NOT NULL,
  created_at  timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (schedule_id, recipient)
);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['report_schedules', 'report_runs', 'report_files', 'report_unsubscribes'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = (SELECT quarry_current_org())) WITH CHECK (org_id = (SELECT quarry_current_org()))', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO quarry_app', t);
  END LOOP;
END $$;

-- Report deliveries go through the notification pipeline (retries, dead letters, delivery health): a delivery
-- belongs to a rule run or to a report run, never both.
ALTER TABLE notification_deliveries ALTER COLUMN rule_id DROP NOT NULL;
ALTER TABLE notification_deliveries ALTER COLUMN run_id DROP NOT NULL;
ALTER TABLE notification_deliveries ADD COLUMN schedule_id text REFERENCES report_schedules(id) ON DELETE CASCADE;
ALTER TABLE notification_deliveries ADD COLUMN report_run_id text REFERENCES report_runs(id) ON DELETE CASCADE;
ALTER TABLE notification_deliveries ADD COLUMN report_scope text;
ALTER TABLE notification_deliveries ADD CONSTRAINT notification_deliveries_rule_or_report
  CHECK ((rule_id IS NOT NULL AND run_id IS NOT NULL AND schedule_id IS NULL AND report_run_id IS NULL)
      OR (rule_id IS NULL AND run_id IS NULL AND schedule_id IS NOT NULL AND report_run_id IS NOT NULL AND report_scope IS NOT NULL));
CREATE UNIQUE INDEX notification_deliveries_report_idx ON notification_deliveries (report_run_id, channel, recipient) WHERE report_run_id IS NOT NULL;

-- E-mail domains report addresses outside the organization's users may be at (lower case, no '@'); none: no such address.
ALTER TABLE organization_settings ADD COLUMN report_allowed_domains text[] NOT NULL DEFAULT '{}' CHECK (cardinality(report_allowed_domains) <= 50);
