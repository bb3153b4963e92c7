-- Notification preferences: who opted out of what (unsubscribes) and when the
-- organization (or one channel) stays quiet. Both are tenant tables under RLS.

-- One opt-out: a user (every channel that reaches them) or an email address,
-- from one rule, from one email group, or (both NULL) from every rule.
CREATE TABLE notification_unsubscribes (
  id                    text PRIMARY KEY,
  org_id                text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id               text REFERENCES users(id) ON DELETE CASCADE,
  address               text,
  rule_id               text REFERENCES notification_rules(id) ON DELETE CASCADE,
  group_subscription_id text REFERENCES notification_group_subscriptions(id) ON DELETE CASCADE,
  created_by            text,
  created_at            timestamptz(3) NOT NULL DEFAULT now(),
  CHECK ((user_id IS NULL) <> (address IS NULL)),
  CHECK (address IS NULL OR address = lower(address)),
  CHECK (rule_id IS NULL OR group_subscription_id IS NULL)
);
CREATE UNIQUE INDEX notification_unsubscribes_once ON notification_unsubscribes
  (org_id, coalesce(user_id, ''), coalesce(address, ''), coalesce(rule_id, ''), coalesce(group_subscription_id, ''));

-- Quiet hours for the whole organization (scope 'org') or one channel kind,
-- as local wall-clock times in organizations.time_zone; a channel row wins.
CREATE TABLE notification_quiet_hours (
  org_id     text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  scope      text NOT NULL CHECK (scope IN ('org', 'email', 'slack', 'webhook', 'in_app')),
  start_time text NOT NULL CHECK (start_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  end_time   text NOT NULL CHECK (end_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
  action     text NOT NULL CHECK (action IN ('defer', 'skip')),
  updated_by text,
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, scope),
  CHECK (start_time <> end_time)
);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['notification_unsubscribes', 'notification_quiet_hours'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = quarry_current_org()) WITH CHECK (org_id = quarry_current_org())', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO quarry_app', t);
  END LOOP;
END $$;
