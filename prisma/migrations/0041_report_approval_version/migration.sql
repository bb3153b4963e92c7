-- An admin's approval of a report schedule's shared scope (what addresses, Slack and webhooks receive) holds for one
-- published version of the dashboard (issue 41): a newer published version sends them nothing until an admin approves
-- again. Approvals given before this column existed are pinned to the version that was published when they were given
-- (the newest published at or before shared_approved_at), so one given before a later publish waits for a new approval.
-- The table's row-level security and grants already cover the column.
ALTER TABLE report_schedules ADD COLUMN shared_approved_version integer;

UPDATE report_schedules s
   SET shared_approved_version = (
         SELECT max(v.version) FROM dashboard_versions v
          WHERE v.dashboard_id = s.dashboard_id AND v.published_at <= s.shared_approved_at)
 WHERE s.shared_approved_at IS NOT NULL;
