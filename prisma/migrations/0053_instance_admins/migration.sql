-- Instance admins (issue 43 §1): the people who make organizations on this install from
-- /instance/organizations, beside the operator's command (`quarry init`). A flag on a user account, kept
-- in a table of its own so that no tenant role can reach it: it is granted and revoked only by the
-- command line (`npm run quarry -- instance-admin grant|revoke <email>`, the connecting role), never by
-- an organization's admin, whose role (quarry_app) may update users but holds no grant here. Row-level
-- security is on and forced with no policy, so a grant made by mistake would still show no row.
-- Not tenant data of one organization: the instance's own, read with the connecting role.
CREATE TABLE quarry_instance_admins (
  user_id    text PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  granted_at timestamptz(3) NOT NULL DEFAULT now()
);
ALTER TABLE quarry_instance_admins ENABLE ROW LEVEL SECURITY;
ALTER TABLE quarry_instance_admins FORCE ROW LEVEL SECURITY;
REVOKE ALL ON quarry_instance_admins FROM PUBLIC;
