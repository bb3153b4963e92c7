-- Email groups as recipients of a report schedule (issue 29): the ids of notification_group_subscriptions rows (the
-- organization's email groups). Only the ids are kept: the members are read when a run is sent, so a group's changes
-- apply from its next run. Members who are users of the organization get their own scope; other addresses the shared
-- scope, under the same admin approval and allowed domains as the schedule's addresses. A group removed later is
-- reported as a skipped delivery, not an error. The table's row-level security and grants already cover the column.
ALTER TABLE report_schedules ADD COLUMN group_ids text[] NOT NULL DEFAULT '{}';
