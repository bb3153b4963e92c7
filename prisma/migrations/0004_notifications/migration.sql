-- Notifications: channel providers per organization, custom alert rules,
-- email-group subscriptions, rule runs, deliveries (with dead letters) and the
-- in-app inbox. Every table is a tenant table under row-level security.
-- The job queue itself (pg-boss) creates its own schema `pgboss` at start.

CREATE TABLE notification_channel_configs (
  org_id      text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  kind        text NOT NULL CHECK (kind IN ('email', 'slack', 'webhook', 'in_app')),
  enabled     boolean NOT NULL DEFAULT true,
  settings    jsonb NOT NULL DEFAULT '{}',
  -- AES-256-GCM envelope of the secret fields (JSON), never stored in clear.
  secrets_enc text,
  updated_by  text,
  updated_at  timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, kind)
);

CREATE TABLE notification_rules (
  id                 text PRIMARY KEY,
  org_id             text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  key                text NOT NULL,
  kind               text NOT NULL DEFAULT 'clone',
  name               text NOT NULL,
  description        text NOT NULL DEFAULT '',
  base_rule_key      text NOT NULL,
  thresholds         jsonb NOT NULL DEFAULT '{}',
  severity           text NOT NULL,
  default_channels   text[] NOT NULL,
  cadence_cron       text NOT NULL,
  enabled            boolean NOT NULL DEFAULT true,
  -- The last cron occurrence handed to the queue; the scheduler never goes back before it.
  last_scheduled_for timestamptz(3),
  created_by         text,
  created_at         timestamptz(3) NOT NULL DEFAULT now(),
  updated_at         timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (org_id, key)
);

CREATE TABLE notification_group_subscriptions (
  id         text PRIMARY KEY,
  org_id     text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  rule_id    text NOT NULL REFERENCES notification_rules(id) ON DELETE CASCADE,
  group_name text NOT NULL,
  members    text[] NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  UNIQUE (rule_id, group_name)
);

-- One row per cron occurrence (or manual trigger) of a rule: the unique key is
-- what keeps two workers from running the same occurrence twice.
CREATE TABLE notification_rule_runs (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  rule_id       text NOT NULL REFERENCES notification_rules(id) ON DELETE CASCADE,
  scheduled_for timestamptz(3) NOT NULL,
  trigger       text NOT NULL CHECK (trigger IN ('cron', 'manual')),
  status        text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'fired', 'quiet', 'error')),
  result        jsonb,
  created_at    timestamptz(3) NOT NULL DEFAULT now(),
  finished_at   timestamptz(3),
  UNIQUE (rule_id, scheduled_for)
);

CREATE TABLE notification_deliveries (
  id              text PRIMARY KEY,
  org_id          text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  run_id          text NOT NULL REFERENCES notification_rule_runs(id) ON DELETE CASCADE,
  rule_id         text NOT NULL REFERENCES notification_rules(id) ON DELETE CASCADE,
  channel         text NOT NULL,
  recipient       text NOT NULL,
  status          text NOT NULL CHECK (status IN ('pending', 'sending', 'retrying', 'delivered', 'skipped', 'dead')),
  reason          text NOT NULL,
  subject         text NOT NULL,
  body            text NOT NULL,
  severity        text NOT NULL,
  dedupe_key      text NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  max_attempts    integer NOT NULL,
  next_attempt_at timestamptz(3),
  last_error      text,
  created_at      timestamptz(3) NOT NULL,
  updated_at      timestamptz(3) NOT NULL,
  delivered_at    timestamptz(3),
  UNIQUE (run_id, channel, recipient)
);
CREATE INDEX notification_deliveries_health_idx ON notification_deliveries (org_id, created_at);
CREATE INDEX notification_deliveries_dedupe_idx ON notification_deliveries (org_id, dedupe_key, channel, recipient, created_at);

CREATE TABLE notification_inbox (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  delivery_id text NOT NULL UNIQUE REFERENCES notification_deliveries(id) ON DELETE CASCADE,
  title       text NOT NULL,
  body        text NOT NULL,
  severity    text NOT NULL,
  created_at  timestamptz(3) NOT NULL,
  read_at     timestamptz(3)
);
CREATE INDEX notification_inbox_user_idx ON notification_inbox (org_id, user_id, created_at DESC);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['notification_channel_configs', 'notification_rules', 'notification_group_subscriptions',
                           'notification_rule_runs', 'notification_deliveries', 'notification_inbox'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = quarry_current_org()) WITH CHECK (org_id = quarry_current_org())', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO quarry_app', t);
  END LOOP;
END $$;
