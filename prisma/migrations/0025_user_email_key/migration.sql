-- One e-mail normalisation for sign-in look-up and throttling (lib/auth/email.ts, issue 26).
-- Sign-in compared lower(u.email) = lower($1) in SQL while the throttle keyed accounts by
-- JavaScript's toLowerCase(); the two disagree (PostgreSQL's lower('İ') is 'i', JavaScript's is
-- 'i' + U+0307, and lower() depends on the server's locale), so `admİn@acme.test` found the admin
-- while its failures were counted under another key. Now the key is computed once, in JavaScript
-- (NFKC, full case fold), stored here, and compared with `=`: look-up and throttle use one value.
--
-- The database computes nothing Unicode-aware. For a printable-ASCII address it fills the key itself
-- (trimmed of spaces, A-Z mapped to a-z with translate(), independent of the locale): exactly what
-- normalizeEmail() gives for ASCII. Any other address must be written together with its key from
-- normalizeEmail(); writing one without it is refused, so no row gets a key from another rule.
-- Existing rows with a non-ASCII address keep no key (NULL matches no sign-in) until one is written.
ALTER TABLE users ADD COLUMN email_key text;

CREATE FUNCTION quarry_ascii_email_key(email text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN email ~ '^[\x20-\x7E]*$'
              THEN translate(btrim(email, ' '), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
         END
$$;

UPDATE users SET email_key = quarry_ascii_email_key(email);

CREATE FUNCTION quarry_users_email_key() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ascii_key text := quarry_ascii_email_key(NEW.email);
BEGIN
  IF ascii_key IS NOT NULL THEN
    NEW.email_key := ascii_key;
  ELSIF NEW.email_key IS NULL
     OR (TG_OP = 'UPDATE' AND NEW.email IS DISTINCT FROM OLD.email AND NEW.email_key IS NOT DISTINCT FROM OLD.email_key) THEN
    RAISE EXCEPTION 'users.email_key must be written with a non-ASCII e-mail address (lib/auth/email.ts normalizeEmail)'
      USING ERRCODE = 'not_null_violation';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER users_email_key BEFORE INSERT OR UPDATE OF email, email_key ON users
  FOR EACH ROW EXECUTE FUNCTION quarry_users_email_key();

CREATE UNIQUE INDEX users_email_key_idx ON users (email_key);
