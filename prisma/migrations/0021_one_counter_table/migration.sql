-- One table for every fixed-window counter shared by the replicas (lib/db/counters.ts): request
-- rate limits (keys `rate …`, were quarry_rate_limits, 0011) and failed sign-ins (keys
-- `sign-in account:<sha256>` and `sign-in address:<ip>`, were sign_in_throttle, 0012). A window
-- that has ended counts as no window. Not tenant data: keys name callers and accounts before an
-- organization is known, so no org_id and no row-level security; only the owner role touches it.
CREATE TABLE quarry_counters (
  key            text PRIMARY KEY,
  window_ends_at timestamptz NOT NULL,
  hits           integer NOT NULL
);
CREATE INDEX quarry_counters_window_ends_idx ON quarry_counters (window_ends_at);

INSERT INTO quarry_counters (key, window_ends_at, hits)
  SELECT 'rate ' || key, expires_at, hits FROM quarry_rate_limits;
-- Both sign-in limits had 15-minute windows (SIGN_IN_LIMITS in lib/auth/throttle.ts).
INSERT INTO quarry_counters (key, window_ends_at, hits)
  SELECT 'sign-in ' || key, window_started_at + interval '15 minutes', failures FROM sign_in_throttle;

DROP TABLE quarry_rate_limits;
DROP TABLE sign_in_throttle;
