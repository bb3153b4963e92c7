-- The audit log (issue 43 §5, lib/audit). One row per change an admin or editor made, written by
-- recordAudit in the same tenant transaction as the change (a rolled-back change leaves no row).
--   actor_kind: 'user' (actor_id a user id, actor_name their name then), 'api_key' (actor_id the key's id),
--               'system' (no person: an instance command, an accepted invitation's new member)
--   address:    the caller's address as the endpoint wrapper resolved it (trusted proxies honoured); null
--               when the change came from no request
--   before/after: the target as the API shows it, secrets masked (lib/audit/mask.ts)
-- Append-only: the application's role may INSERT and SELECT, never UPDATE or DELETE (grants below), and a
-- trigger refuses UPDATE, DELETE and TRUNCATE to every role but the table's owner, which runs the
-- retention job (lib/audit/retention.ts) as the connecting login.
CREATE TABLE audit_events (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  occurred_at timestamptz(3) NOT NULL DEFAULT now(),
  actor_kind  text NOT NULL CHECK (actor_kind IN ('user', 'api_key', 'system')),
  actor_id    text,
  actor_name  text,
  address     text,
  action      text NOT NULL CHECK (action ~ '^[a-z_]+\.[a-z_]+$'),
  target_kind text NOT NULL,
  target_id   text,
  target_name text,
  before      jsonb,
  after       jsonb
);
CREATE INDEX audit_events_org_time_idx ON audit_events (org_id, occurred_at DESC, id DESC);
-- Retention deletes across organizations by age.
CREATE INDEX audit_events_time_idx ON audit_events (occurred_at);

ALTER TABLE audit_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON audit_events
  USING (org_id = (SELECT quarry_current_org()))
  WITH CHECK (org_id = (SELECT quarry_current_org()));
REVOKE ALL ON audit_events FROM PUBLIC, quarry_app, quarry_reader;
GRANT SELECT, INSERT ON audit_events TO quarry_app;

CREATE FUNCTION quarry_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT relowner FROM pg_class WHERE oid = TG_RELID) IS DISTINCT FROM (SELECT oid FROM pg_roles WHERE rolname = current_user) THEN
    RAISE EXCEPTION 'audit_events is append-only: % is refused', TG_OP USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events FOR EACH ROW EXECUTE FUNCTION quarry_audit_append_only();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events FOR EACH STATEMENT EXECUTE FUNCTION quarry_audit_append_only();
