-- Account e-mails in the demo outbox (issue 43 §2; lib/members/mail.ts). An invitation or a password reset of an
-- organization without an e-mail channel of its own (none, a disabled one, or the demo's outbox) is kept as a
-- delivery of the demo outbox, which its admins read, instead of going nowhere. Such a delivery has no rule, report,
-- alert or pull behind it: account_mail says what it is, and the sender check admits it with no other sender.
-- notification_deliveries keeps its forced row-level security and grants (migration 0004).
ALTER TABLE notification_deliveries ADD COLUMN account_mail text CHECK (account_mail IN ('invitation', 'password_reset'));
DO $$
DECLARE
  existing text;
BEGIN
  SELECT pg_get_constraintdef(oid) INTO STRICT existing FROM pg_constraint
   WHERE conrelid = 'notification_deliveries'::regclass AND conname = 'notification_deliveries_rule_or_report';
  ALTER TABLE notification_deliveries DROP CONSTRAINT notification_deliveries_rule_or_report;
  -- pg_get_constraintdef answers "CHECK (<expression>)".
  EXECUTE format(
    'ALTER TABLE notification_deliveries ADD CONSTRAINT notification_deliveries_rule_or_report CHECK ((account_mail IS NULL AND (%s)) OR (account_mail IS NOT NULL AND rule_id IS NULL AND run_id IS NULL AND schedule_id IS NULL AND report_run_id IS NULL AND alert_message_id IS NULL AND pull_run_id IS NULL))',
    substring(existing FROM '^CHECK \((.*)\)$'));
END $$;
