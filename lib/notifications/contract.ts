import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { ChannelKind } from "@/lib/notifications/channel-kinds";
import { pageOf, pageQuery } from "@/lib/pagination";

const ts = z.iso.datetime().describe("ISO 8601, UTC");
const tags = ["Notifications"];
const IdParams = z.object({ id: z.string().min(1).max(100) });

/* ---------- channel providers ---------- */

export const ChannelConfigView = z
  .object({
    kind: ChannelKind,
    configured: z.boolean(),
    enabled: z.boolean(),
    config: z.record(z.string(), z.unknown()).describe("Settings; secret fields come back masked (`****abcd`)"),
    updated_at: ts.nullable(),
    updated_by: z.string().nullable(),
  })
  .meta({ id: "ChannelConfig" });

export const ChannelConfigBody = z
  .object({
    enabled: z.boolean().default(true),
    config: z
      .record(z.string(), z.unknown())
      .default({})
      .describe(
        "Per kind — email: host, port, secure, user, password, from; slack: mode `webhook` + webhook_url, or mode `bot` + bot_token + channel; " +
          "webhook: url, signing_secret; in_app: nothing. Secret fields may be omitted to keep the stored value.",
      ),
  })
  .meta({ id: "ChannelConfigInput" });

const KindParams = z.object({ kind: ChannelKind.describe("Channel kind: email, slack, webhook or in_app") });

export const listChannelConfigs = defineEndpoint({
  method: "get",
  path: "/api/v1/notifications/admin/channel-configs",
  summary: "Inspect the organization's channel providers",
  description: "One entry per channel kind, configured or not: a fixed set, not a paged list.",
  tags,
  access: "admin",
  response: z.object({ items: z.array(ChannelConfigView) }),
});

export const putChannelConfig = defineEndpoint({
  method: "put",
  path: "/api/v1/notifications/admin/channel-configs/{kind}",
  summary: "Set a channel provider",
  description: "Validates the provider (Slack URLs must be Slack's https hosts; URLs and SMTP hosts may not point at private or loopback addresses unless allow-listed). Secrets are encrypted at rest and returned masked.",
  tags,
  access: "admin",
  params: KindParams,
  body: ChannelConfigBody,
  response: ChannelConfigView,
});

export const TestResult = z.object({ kind: ChannelKind, ok: z.boolean(), recipient: z.string(), detail: z.string() }).meta({ id: "ChannelTestResult" });

export const testChannel = defineEndpoint({
  method: "post",
  path: "/api/v1/notifications/admin/channel-configs/{kind}/test",
  summary: "Send a test message through a channel provider",
  description: "Email goes to the calling admin's address, Slack to the configured channel, webhooks to the configured URL, in-app to the caller's inbox.",
  tags,
  access: "admin",
  params: KindParams,
  response: TestResult,
  rateLimit: { limit: 10, windowSeconds: 60 },
});

/* ---------- base rules and custom rules ---------- */

export const Severity = z.enum(["info", "warning", "critical"]);

export const BaseRuleView = z
  .object({
    key: z.string(),
    name: z.string(),
    description: z.string(),
    default_severity: Severity,
    default_cron: z.string(),
    thresholds: z.record(z.string(), z.unknown()).describe("JSON Schema of the thresholds a clone may set"),
  })
  .meta({ id: "BaseRule" });

export const listBaseRules = defineEndpoint({
  method: "get",
  path: "/api/v1/notifications/admin/base-rules",
  summary: "List the base rules custom rules can clone",
  description: "The catalog shipped with Quarry: a fixed set, not a paged list.",
  tags,
  access: "admin",
  response: z.object({ items: z.array(BaseRuleView) }),
});

const RuleKey = z
  .string()
  .max(120)
  .regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/, "Must be a dotted key of lowercase words, e.g. sales.gap_to_target.east");
const Channels = z
  .array(ChannelKind)
  .min(1)
  .refine((list) => new Set(list).size === list.length, "Channels must not repeat");
const Cron = z.string().min(1).max(120).describe("Five-field cron expression in UTC, e.g. `*/15 * * * *`");

export const CreateRuleBody = z
  .object({
    kind: z.literal("clone").describe("Only `clone` (a rule cloned from a base rule)"),
    key: RuleKey,
    name: z.string().trim().min(1).max(200),
    description: z.string().max(2000).default(""),
    base_rule_key: z.string().min(1).max(120),
    thresholds: z.record(z.string(), z.unknown()).default({}).describe("Numeric thresholds declared by the base rule, e.g. `gap_pct` (percent)"),
    severity: Severity,
    default_channels: Channels.describe("Configured channel kinds: in_app, email, slack, webhook"),
    cadence_cron: Cron,
  })
  .meta({ id: "CustomRuleInput" });
export type CreateRuleBody = z.output<typeof CreateRuleBody>;

export const UpdateRuleBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    description: z.string().max(2000),
    thresholds: z.record(z.string(), z.unknown()),
    severity: Severity,
    default_channels: Channels,
    cadence_cron: Cron,
    enabled: z.boolean().describe("false disables the rule: it stops running and cannot be triggered"),
  })
  .partial()
  .meta({ id: "CustomRuleUpdate" });
export type UpdateRuleBody = z.output<typeof UpdateRuleBody>;

export const RuleRunView = z
  .object({
    id: z.string(),
    trigger: z.enum(["cron", "manual"]).describe("cron: its schedule; manual: Run now (POST …/trigger)"),
    scheduled_for: ts,
    status: z
      .enum(["queued", "fired", "quiet", "error"])
      .describe("queued: waiting to be evaluated; fired: the condition held and deliveries were made; quiet: evaluated, nothing to send; error: the evaluation failed (see error)"),
    finished_at: ts.nullable(),
    error: z.string().nullable().describe("Why the evaluation failed"),
    deliveries: z
      .array(z.object({ channel: ChannelKind, status: z.string().describe("pending, sending, retrying, delivered, skipped or dead"), count: z.number().int() }))
      .describe("The run's deliveries per channel and outcome"),
  })
  .meta({ id: "RuleRun" });

export const RuleView = z
  .object({
    id: z.string(),
    kind: z.literal("clone"),
    key: z.string(),
    name: z.string(),
    description: z.string(),
    base_rule_key: z.string(),
    thresholds: z.record(z.string(), z.number()),
    severity: Severity,
    default_channels: z.array(ChannelKind),
    cadence_cron: z.string(),
    enabled: z.boolean(),
    next_runs: z.array(ts).describe("The next five occurrences (empty when disabled)"),
    last_scheduled_for: ts.nullable(),
    last_run: RuleRunView.nullable().describe("What the rule did last (scheduled or manual), null before its first run"),
    fired_runs: z.number().int().describe("How many of its runs fired (found something to report), all time"),
    group_subscriptions: z.number().int(),
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: "CustomRule" });

export const createRule = defineEndpoint({
  method: "post",
  path: "/api/v1/notifications/admin/custom-rules",
  summary: "Create a custom rule cloned from a base rule",
  tags,
  access: "admin",
  body: CreateRuleBody,
  response: RuleView,
  status: 201,
  errors: [409],
});

export const listRules = defineEndpoint({
  method: "get",
  path: "/api/v1/notifications/admin/custom-rules",
  summary: "List custom rules with their next runs",
  description: "By key.",
  tags,
  access: "admin",
  query: pageQuery,
  response: pageOf(RuleView),
});

export const getRule = defineEndpoint({
  method: "get",
  path: "/api/v1/notifications/admin/custom-rules/{id}",
  summary: "Get a custom rule",
  tags,
  access: "admin",
  params: IdParams,
  response: RuleView,
});

export const updateRule = defineEndpoint({
  method: "patch",
  path: "/api/v1/notifications/admin/custom-rules/{id}",
  summary: "Update or disable a custom rule",
  tags,
  access: "admin",
  params: IdParams,
  body: UpdateRuleBody,
  response: RuleView,
});

export const RunView = z
  .object({ id: z.string(), rule_id: z.string(), scheduled_for: ts, trigger: z.enum(["cron", "manual"]), status: z.string() })
  .meta({ id: "RuleRun" });

export const triggerRule = defineEndpoint({
  method: "post",
  path: "/api/v1/notifications/admin/custom-rules/{id}/trigger",
  summary: "Run a rule now",
  description: "Queues one evaluation of the rule outside its cadence. Rate limited: 5 per minute per caller (429 with Retry-After).",
  tags,
  access: "admin",
  params: IdParams,
  response: RunView,
  status: 202,
  rateLimit: { limit: 5, windowSeconds: 60 },
  errors: [409, 429],
});

/* ---------- group subscriptions ---------- */

export const CreateGroupSubscriptionBody = z
  .object({
    rule_key: z.string().min(1).max(120).describe("Key of the custom rule to fan out"),
    group_name: z.string().trim().min(1).max(100).describe("Name of the email group, unique per rule"),
    members: z
      .array(z.email().transform((e) => e.toLowerCase()))
      .min(1)
      .max(500)
      .describe("Member email addresses"),
  })
  .meta({ id: "GroupSubscriptionInput" });
export type CreateGroupSubscriptionBody = z.output<typeof CreateGroupSubscriptionBody>;

export const GroupSubscriptionView = z
  .object({ id: z.string(), rule_id: z.string(), rule_key: z.string(), group_name: z.string(), members: z.array(z.string()), created_at: ts })
  .meta({ id: "GroupSubscription" });

export const createGroupSubscription = defineEndpoint({
  method: "post",
  path: "/api/v1/notifications/admin/group-subscriptions",
  summary: "Fan a rule out to an email group",
  tags,
  access: "admin",
  body: CreateGroupSubscriptionBody,
  response: GroupSubscriptionView,
  status: 201,
  errors: [409],
});

export const listGroupSubscriptions = defineEndpoint({
  method: "get",
  path: "/api/v1/notifications/admin/group-subscriptions",
  summary: "List email-group subscriptions",
  description: "Oldest first.",
  tags,
  access: "admin",
  query: pageQuery,
  response: pageOf(GroupSubscriptionView),
});

export const deleteGroupSubscription = defineEndpoint({
  method: "delete",
  path: "/api/v1/notifications/admin/group-subscriptions/{id}",
  summary: "Remove an email-group subscription",
  tags,
  access: "admin",
  params: IdParams,
  status: 204,
});

/* ---------- unsubscribes ---------- */

export const CreateUnsubscribeBody = z
  .object({
    user_id: z.string().min(1).max(100).optional().describe("A user of the organization: stops both their in-app and email deliveries"),
    address: z
      .email()
      .transform((e) => e.toLowerCase())
      .optional()
      .describe("An email address (e.g. a group member who is not a user)"),
    rule_key: z.string().min(1).max(120).optional().describe("Opt out of this rule only"),
    group_subscription_id: z.string().min(1).max(100).optional().describe("Opt out of this email group only (other groups and admin mail still reach the address)"),
  })
  .refine((b) => (b.user_id === undefined) !== (b.address === undefined), { message: "Give exactly one of user_id and address", path: ["user_id"] })
  .refine((b) => b.rule_key === undefined || b.group_subscription_id === undefined, { message: "Give at most one of rule_key and group_subscription_id (neither: every rule)", path: ["rule_key"] })
  .meta({ id: "UnsubscribeInput" });
export type CreateUnsubscribeBody = z.output<typeof CreateUnsubscribeBody>;

export const UnsubscribeView = z
  .object({
    id: z.string(),
    user_id: z.string().nullable(),
    user_name: z.string().nullable().describe("the member's name, as the admin page shows it; null for an address or a member who is gone"),
    address: z.string().nullable(),
    scope: z.enum(["all", "rule", "group"]),
    rule_id: z.string().nullable(),
    rule_key: z.string().nullable(),
    group_subscription_id: z.string().nullable(),
    group_name: z.string().nullable(),
    created_at: ts,
  })
  .meta({ id: "Unsubscribe" });

export const createUnsubscribe = defineEndpoint({
  method: "post",
  path: "/api/v1/notifications/admin/unsubscribes",
  summary: "Unsubscribe a user or an email address from a rule, an email group, or everything",
  description: "Deliveries that would reach the recipient are recorded as skipped with the reason `recipient unsubscribed …`.",
  tags,
  access: "admin",
  body: CreateUnsubscribeBody,
  response: UnsubscribeView,
  status: 201,
  errors: [409],
});

export const listUnsubscribes = defineEndpoint({
  method: "get",
  path: "/api/v1/notifications/admin/unsubscribes",
  summary: "List unsubscribes",
  description: "Oldest first.",
  tags,
  access: "admin",
  query: pageQuery,
  response: pageOf(UnsubscribeView),
});

export const deleteUnsubscribe = defineEndpoint({
  method: "delete",
  path: "/api/v1/notifications/admin/unsubscribes/{id}",
  summary: "Remove an unsubscribe (subscribe again)",
  tags,
  access: "admin",
  params: IdParams,
  status: 204,
});

/* ---------- quiet hours ---------- */

const WallTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, "Must be a 24-hour time HH:MM");

export const QuietWindow = z
  .object({
    start: WallTime.describe("Local time (organization time zone) the quiet period starts, inclusive"),
    end: WallTime.describe("Local time it ends, exclusive; before `start` means it runs past midnight"),
    action: z.enum(["defer", "skip"]).describe("defer: hold deliveries until the end; skip: record them as skipped"),
  })
  .refine((w) => w.start !== w.end, { message: "start and end must differ", path: ["end"] })
  .meta({ id: "QuietWindow" });
export type QuietWindow = z.output<typeof QuietWindow>;

export const QuietHoursBody = z
  .object({
    org: QuietWindow.nullable().default(null).describe("Quiet hours for every channel; null for none"),
    channels: z
      .partialRecord(ChannelKind, QuietWindow.nullable())
      .default({})
      .describe("Per-channel windows, overriding `org` for that channel"),
  })
  .meta({ id: "QuietHoursInput" });
export type QuietHoursBody = z.output<typeof QuietHoursBody>;

export const QuietHoursView = z
  .object({
    time_zone: z.string().describe("The organization's time zone the windows are read in"),
    org: QuietWindow.nullable(),
    channels: z.record(ChannelKind, QuietWindow.nullable()),
  })
  .meta({ id: "QuietHours" });

export const getQuietHours = defineEndpoint({
  method: "get",
  path: "/api/v1/notifications/admin/quiet-hours",
  summary: "The organization's quiet hours",
  tags,
  access: "admin",
  response: QuietHoursView,
});

export const putQuietHours = defineEndpoint({
  method: "put",
  path: "/api/v1/notifications/admin/quiet-hours",
  summary: "Set quiet hours for the organization and per channel",
  description: "Replaces every window. Deliveries created inside a window are deferred to its end or skipped, with the reason recorded.",
  tags,
  access: "admin",
  body: QuietHoursBody,
  response: QuietHoursView,
});

/* ---------- deliveries, dead letters, health ---------- */

export const DeliveryStatus = z.enum(["pending", "sending", "retrying", "delivered", "skipped", "dead"]);

export const DeliveryView = z
  .object({
    id: z.string(),
    rule_id: z.string().nullable().describe("The rule that sent it; null for a scheduled report's delivery"),
    report_schedule_id: z.string().nullable().describe("The report schedule that sent it; null for a rule's delivery"),
    rule_key: z.string().describe("The rule's key, or `report: <schedule name>` for a scheduled report"),
    channel: ChannelKind,
    recipient: z.string(),
    status: DeliveryStatus,
    reason: z.string().describe("Why it was delivered, failed or skipped"),
    subject: z.string(),
    attempts: z.number().int(),
    max_attempts: z.number().int(),
    next_attempt_at: ts.nullable(),
    last_error: z.string().nullable(),
    created_at: ts,
    delivered_at: ts.nullable(),
  })
  .meta({ id: "Delivery" });

const OutboxAttachment = z.object({
  file_id: z.string(),
  filename: z.string(),
  content_type: z.string(),
  pages: z.number().int().describe("Pages of a PDF; 1 for a PNG"),
});

export const DemoOutboxMail = DeliveryView.extend({
  body: z.string(),
  attachments: z
    .array(OutboxAttachment)
    .describe(
      "A scheduled report's rendered files, as the e-mail would carry them (download each through demo-outbox/{id}/attachments/{file_id}); " +
        "empty for other messages, for a report not rendered yet, and for an admin limited to some locations (a report may show others)",
    ),
}).meta({ id: "DemoOutboxMail" });

export const listDemoOutbox = defineEndpoint({
  method: "get",
  path: "/api/v1/notifications/admin/demo-outbox",
  summary: "The embedded demo's outbox: e-mail and Slack messages kept, never sent",
  description:
    "With the demo data (QUARRY_SEED_DEMO) an organization without an e-mail or Slack channel gets the demo outbox as that channel: rules, " +
    "e-mail groups and subscriptions deliver to it and nothing leaves Quarry. Newest first; a real provider configured replaces it.",
  tags,
  access: "admin",
  query: pageQuery,
  response: pageOf(DemoOutboxMail),
});

export const downloadDemoOutboxAttachment = defineEndpoint({
  method: "get",
  path: "/api/v1/notifications/admin/demo-outbox/{id}/attachments/{file_id}",
  summary: "One file a report e-mail in the demo outbox carries",
  description: "The rendered PDF or PNG the e-mail would have attached, for admins of every location.",
  tags,
  access: "admin",
  params: z.object({ id: z.string().min(1).max(100), file_id: z.string().min(1).max(100) }),
  produces: "application/octet-stream",
  errors: [404],
});

export const listDeadLetters = defineEndpoint({
  method: "get",
  path: "/api/v1/notifications/admin/dead-letters",
  summary: "List permanently failed deliveries",
  description: "Most recently failed first.",
  tags,
  access: "admin",
  query: pageQuery,
  response: pageOf(DeliveryView),
});

export const requeueDeadLetter = defineEndpoint({
  method: "post",
  path: "/api/v1/notifications/admin/dead-letters/{id}/requeue",
  summary: "Requeue a dead letter for a fresh round of attempts",
  tags,
  access: "admin",
  params: IdParams,
  response: DeliveryView,
  status: 202,
  errors: [409],
});

export const HealthQuery = z.object({
  hours: z.coerce.number().int().min(1).max(24 * 30).default(24).describe("Look-back window"),
  limit: z.coerce.number().int().min(1).max(500).default(50).describe("Recent deliveries to list"),
});

export const DeliveryHealth = z
  .object({
    from: ts,
    to: ts,
    channels: z.array(
      z.object({
        channel: ChannelKind,
        delivered: z.number().int(),
        dead: z.number().int(),
        skipped: z.number().int(),
        in_flight: z.number().int(),
        success_rate: z.number().nullable().describe("delivered / (delivered + dead); null without finished deliveries"),
      }),
    ),
    series: z.array(z.object({ bucket: ts, delivered: z.number().int(), dead: z.number().int(), skipped: z.number().int(), in_flight: z.number().int() })).describe("Hourly counts by creation time"),
    recent: z.array(DeliveryView),
  })
  .meta({ id: "DeliveryHealth" });

export const deliveryHealth = defineEndpoint({
  method: "get",
  path: "/api/v1/notification-channels/delivery-health",
  summary: "Recent deliveries, why each was delivered, failed or skipped, and per-channel success rates",
  tags,
  access: "admin",
  query: HealthQuery,
  response: DeliveryHealth,
});

/* ---------- in-app inbox (any signed-in user, own items only) ---------- */

export const InboxItemView = z
  .object({ id: z.string(), title: z.string(), body: z.string(), severity: Severity, created_at: ts, read_at: ts.nullable() })
  .meta({ id: "InboxItem" });

export const listInbox = defineEndpoint({
  method: "get",
  path: "/api/v1/notifications/inbox",
  summary: "The caller's in-app notifications",
  description: "Newest first; `unread` counts every unread item, across pages.",
  tags,
  access: "user",
  query: pageQuery,
  response: pageOf(InboxItemView).extend({ unread: z.number().int() }),
});

export const markInboxRead = defineEndpoint({
  method: "post",
  path: "/api/v1/notifications/inbox/{id}/read",
  summary: "Mark one in-app notification read",
  tags,
  access: "user",
  params: IdParams,
  response: InboxItemView,
});
