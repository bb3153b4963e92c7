-- Sessions follow their user (lib/auth/session.ts, issue 26). A session cookie carries the role,
-- location scope and session epoch of its user at sign-in; every cookie-authenticated request (and
-- every refresh of the cookie) reads the user's current row in the same query as the sign-out check
-- (quarry_revoked_sessions, migration 0019) and refuses the session when the row is gone or any of
-- them differs. So a role change, a location change or a deletion ends the user's sessions at once,
-- on every replica: the state is in this table, not in a process.
--
-- The epoch is what ends every session of a user without listing them: "sign out everywhere" (the
-- user) and "end this user's sessions" (an admin of the organization) add one. The trigger adds one
-- on every change of role, locations, organization or password, so a change that is later undone
-- (admin -> analyst -> admin) still ends the sessions issued before it, whichever code path (or a
-- hand-written UPDATE) made it.
ALTER TABLE users ADD COLUMN session_epoch integer NOT NULL DEFAULT 0;

CREATE FUNCTION quarry_users_session_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.session_epoch IS NOT DISTINCT FROM OLD.session_epoch AND (
       NEW.role IS DISTINCT FROM OLD.role
    OR NEW.location_ids IS DISTINCT FROM OLD.location_ids
    OR NEW.org_id IS DISTINCT FROM OLD.org_id
    OR NEW.password_hash IS DISTINCT FROM OLD.password_hash) THEN
    NEW.session_epoch := OLD.session_epoch + 1;
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER users_session_epoch BEFORE UPDATE ON users
  FOR EACH ROW EXECUTE FUNCTION quarry_users_session_epoch();
