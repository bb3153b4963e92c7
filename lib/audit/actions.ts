import { z } from "zod";

/**
 * Every action the audit log records, `<target kind>.<verb>`: the target's kind is the part before the dot. The
 * areas being built elsewhere (data loads, SSO, widget alerts) have theirs here already; README.md says where each
 * call goes.
 */
export const AUDIT_ACTIONS = [
  "member.update",
  "member.delete",
  "member.password_reset",
  "invitation.create",
  "invitation.revoke",
  "invitation.accept",
  "location.create",
  "location.update",
  "api_key.create",
  "api_key.revoke",
  "dashboard.create",
  "dashboard.edit",
  "dashboard.publish",
  "dashboard.restore",
  "dashboard.delete",
  "embed.create",
  "embed.revoke",
  "channel.update",
  "channel.delete",
  "rule.create",
  "rule.update",
  "rule.delete",
  "quiet_hours.update",
  "email_group.create",
  "email_group.update",
  "email_group.delete",
  "report_schedule.create",
  "report_schedule.update",
  "report_schedule.delete",
  "data_table.load",
  "data_table.delete",
  "sso.update",
  "alert.create",
  "alert.update",
  "alert.delete",
  "organization.setup",
  "organization.create",
  "organization.update",
  "session.sign_out",
  "session.end",
] as const;

export const AuditAction = z.enum(AUDIT_ACTIONS);
export type AuditAction = z.infer<typeof AuditAction>;

export const AUDIT_TARGET_KINDS = [...new Set(AUDIT_ACTIONS.map((a) => a.split(".")[0]))] as [string, ...string[]];
export const AuditTargetKind = z.enum(AUDIT_TARGET_KINDS);

export const targetKindOf = (action: AuditAction) => action.slice(0, action.indexOf("."));
