-- Browser sessions signed out before their cookie expires (lib/auth/session-revocation.ts). A session
-- cookie is a signed JWT that any replica can verify on its own; this table is what makes a sign-out
-- on one replica refused on every other at once: each request looks its session id up here (one
-- primary-key probe). A row is needed only until the last cookie of that session could expire
-- (the session lifetime after the sign-out: revoked sessions can no longer be refreshed), then it
-- is deleted. Not tenant data: no org_id, no row-level security, only the connecting (system) role
-- touches it; quarry_app and quarry_reader get no grant.
CREATE TABLE quarry_revoked_sessions (
  session_id text PRIMARY KEY,
  revoked_at timestamptz(3) NOT NULL DEFAULT now(),
  expires_at timestamptz(3) NOT NULL
);
CREATE INDEX quarry_revoked_sessions_expires_idx ON quarry_revoked_sessions (expires_at);
