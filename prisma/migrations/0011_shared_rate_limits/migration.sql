-- Rate limits shared by every replica (lib/api/rate-limit.ts): one fixed window per key,
-- counted with one atomic upsert, so N replicas enforce one limit, not N. Not a tenant table:
-- keys name the caller (organization and user, or address); only the owner role touches it.
CREATE TABLE quarry_rate_limits (
  key        text PRIMARY KEY,
  expires_at timestamptz NOT NULL,
  hits       integer NOT NULL
);
CREATE INDEX quarry_rate_limits_expires_idx ON quarry_rate_limits (expires_at);
