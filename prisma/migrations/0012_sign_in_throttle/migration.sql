-- Failed sign-ins per account (hashed email) and per caller address, in fixed windows.
-- Not tenant data: sign-in happens before an organization is known, so the table has no org_id and no
-- row-level security, and only the connecting (system) role touches it; quarry_app and quarry_reader get no grant.
CREATE TABLE sign_in_throttle (
  key               text PRIMARY KEY,
  failures          integer NOT NULL,
  window_started_at timestamptz(3) NOT NULL
);
