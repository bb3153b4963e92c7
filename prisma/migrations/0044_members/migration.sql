-- Members, invitations, password resets, first-run setup, locations' archive (issue 43 §1–§3).
--
-- Tokens (invitations, password resets) are 256 random bits shown once, in the link; a row keeps only
-- their SHA-256 (lib/members/tokens.ts). Each is single-use (accepted_at / used_at, set under a row
-- lock) and expires. One open invitation per address per organization: inviting again replaces it.

ALTER TABLE organizations ADD COLUMN currency text NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$');

-- A deactivated member cannot sign in and their sessions end (the epoch moves on when they are
-- deactivated); their dashboards, schedules and keys keep naming them.
ALTER TABLE users ADD COLUMN status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'deactivated'));
ALTER TABLE users ADD COLUMN last_sign_in_at timestamptz(3);

-- An archived location keeps its rows (orders, targets, members' scopes) and leaves pickers.
ALTER TABLE locations ADD COLUMN archived_at timestamptz(3);

CREATE TABLE member_invitations (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  email        text NOT NULL,
  -- lib/auth/email.ts normalizeEmail(email), as users.email_key
  email_key    text NOT NULL,
  role         text NOT NULL CHECK (role IN ('admin', 'general_manager', 'analyst')),
  location_ids text[] NOT NULL DEFAULT '{}',
  token_hash   bytea NOT NULL UNIQUE,
  expires_at   timestamptz(3) NOT NULL,
  -- null: made by the instance's command (`quarry init`), not by a member
  created_by   text,
  created_at   timestamptz(3) NOT NULL DEFAULT now(),
  accepted_at  timestamptz(3),
  accepted_by  text,
  revoked_at   timestamptz(3)
);
CREATE UNIQUE INDEX member_invitations_open_idx ON member_invitations (org_id, email_key) WHERE accepted_at IS NULL AND revoked_at IS NULL;
CREATE INDEX member_invitations_org_created_idx ON member_invitations (org_id, created_at DESC);

CREATE TABLE password_resets (
  id         text PRIMARY KEY,
  org_id     text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token_hash bytea NOT NULL UNIQUE,
  expires_at timestamptz(3) NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  used_at    timestamptz(3)
);
CREATE INDEX password_resets_user_idx ON password_resets (user_id);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['member_invitations', 'password_resets'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (org_id = (SELECT quarry_current_org())) WITH CHECK (org_id = (SELECT quarry_current_org()))', t);
  END LOOP;
END $$;
GRANT SELECT, INSERT, UPDATE, DELETE ON member_invitations, password_resets TO quarry_app;

-- First-run setup (lib/members/setup.ts): the one row that says the install was set up from the
-- setup page. Its primary key admits one row, so of two setups submitted at once on any replicas
-- one commits and the other fails on the key (409). Written by the connecting role only; no tenant
-- role holds a grant on it.
CREATE TABLE quarry_instance_setup (
  singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  org_id       text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  completed_at timestamptz(3) NOT NULL DEFAULT now()
);
ALTER TABLE quarry_instance_setup ENABLE ROW LEVEL SECURITY;
ALTER TABLE quarry_instance_setup FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON quarry_instance_setup USING (org_id = (SELECT quarry_current_org())) WITH CHECK (org_id = (SELECT quarry_current_org()));
-- An install that already has organizations was set up before this page existed.
INSERT INTO quarry_instance_setup (org_id) SELECT id FROM organizations ORDER BY created_at, id LIMIT 1;
