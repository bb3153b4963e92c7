import { z } from "zod";
import { FieldId, ManifestId } from "./ids";

/**
 * An alert on what a widget shows (issue 45): the one schema of its declaration, for a dashboard manifest's
 * `spec.alerts` and for the alerts API (lib/alerts/contract.ts builds on it), so the two cannot drift. What the
 * schema cannot know (the widget exists and carries the column, the filters are filter widgets, a change has a
 * date filter to shift) is checked by lib/manifest-check/alerts.ts and again by the service.
 */

/** How far back a change looks: the same span of the previous day, ISO week or calendar month, in the organization's time zone. */
export const ChangePeriod = z.enum(["day", "week", "month"]);
export type ChangePeriod = z.infer<typeof ChangePeriod>;

export const AlertCondition = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("above"), threshold: z.number().describe("met when the value is greater than this") }),
  z.strictObject({ kind: z.literal("below"), threshold: z.number().describe("met when the value is less than this") }),
  z
    .strictObject({
      kind: z.literal("outside"),
      low: z.number().describe("met when the value is less than low ..."),
      high: z.number().describe("... or greater than high"),
    })
    .refine((c) => c.low <= c.high, { message: "low must not be greater than high", path: ["high"] }),
  z.strictObject({
    kind: z.literal("change"),
    against: ChangePeriod.describe("the previous aligned period: the alert's date filter shifted back one day, week or month"),
    measure: z.enum(["absolute", "percent"]).describe("absolute: value minus previous; percent: that difference as a percentage of |previous|"),
    direction: z.enum(["increase", "decrease", "either"]),
    amount: z.number().positive().describe("met when the change is at least this large in the direction given (percent: 10 means 10%)"),
  }),
  z.strictObject({ kind: z.literal("no_data").describe("met when the widget returns no value (no row, or a null value)") }),
]);
export type AlertCondition = z.infer<typeof AlertCondition>;

export const AlertCadence = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("cron"),
    cron: z.string().trim().min(1).max(120).describe("five-field cron expression in the organization's time zone, e.g. `0 8 * * *`"),
  }),
  z.strictObject({ kind: z.literal("on_data_change").describe("after a warehouse change or a table load") }),
]);
export type AlertCadence = z.infer<typeof AlertCadence>;

const distinct = <T>(list: readonly T[]) => new Set(list).size === list.length;

export const AlertRecipients = z.strictObject({
  me: z.boolean().default(true).describe("the alert's owner (who created it, or who pushed the manifest)"),
  user_ids: z.array(z.string().min(1).max(100)).max(200).default([]).refine(distinct, "users must not repeat").describe("members of the organization: each is alerted in their own role and location scope"),
  group_ids: z
    .array(z.string().min(1).max(100))
    .max(50)
    .default([])
    .refine(distinct, "email groups must not repeat")
    .describe("email groups (notification group subscriptions): members who are users get their own scope, other addresses the shared scope once an admin approved it"),
  channels: z
    .array(z.enum(["slack", "webhook"]))
    .max(2)
    .default([])
    .refine(distinct, "channels must not repeat")
    .describe("the organization's Slack and webhook channels: they receive the shared scope once an admin approved it"),
  user_channels: z
    .array(z.enum(["email", "in_app"]))
    .min(1)
    .max(2)
    .default(["email", "in_app"])
    .refine(distinct, "channels must not repeat")
    .describe("how users (me and user_ids) are told"),
});
export type AlertRecipients = z.infer<typeof AlertRecipients>;

/** The fields of an alert's declaration, shared by the manifest and the API. */
export const alertDeclarationFields = {
  name: z.string().trim().min(1).max(200).describe("what messages and the alert list call it"),
  widget_id: ManifestId.describe("metadata.id of the widget the alert watches (a KPI, chart or table)"),
  column: FieldId.optional().describe("the metric (or series) column watched; a KPI's value column when omitted, required for charts and tables"),
  reduce: z
    .enum(["last", "first", "sum", "min", "max", "mean"])
    .default("last")
    .describe("how the rows of a chart or table (per dimension value when `per` is set) make one value; a KPI's single row is its value"),
  condition: AlertCondition,
  filters: z.record(z.string(), z.unknown()).default({}).describe("filter widget metadata.id -> value, as captured from the screen and checked like the viewer's"),
  per: FieldId.optional().describe("a dimension column of the widget: one alert state per value (e.g. each location)"),
  min_volume: z
    .strictObject({
      column: FieldId.describe("a column of the widget counting the rows behind the value (e.g. orders)"),
      at_least: z.number().min(0),
    })
    .optional()
    .describe("below this volume an evaluation is recorded as below_min_volume and moves no state"),
  cadence: AlertCadence,
  recipients: AlertRecipients.default({ me: true, user_ids: [], group_ids: [], channels: [], user_channels: ["email", "in_app"] }),
  notify_on_resolved: z.boolean().default(false).describe("also tell recipients when a firing alert resolves"),
  renotify_minutes: z
    .int()
    .min(5)
    .max(60 * 24 * 30)
    .nullable()
    .default(null)
    .describe("while still firing, tell again after this many minutes; null: only when it starts firing"),
  only_once: z.boolean().default(false).describe("tell once per firing and never re-notify; re-armed after the alert resolves"),
};

/** An alert declared in a dashboard manifest (`spec.alerts`): its id is stable across pushes, so a push updates it in place. */
export const ManifestAlert = z.strictObject({ id: ManifestId.describe("identifier, unique among the dashboard's alerts"), ...alertDeclarationFields });
export type ManifestAlert = z.infer<typeof ManifestAlert>;

/** What an alert's row keeps beside its own columns (name, widget, cadence): the rest of its declaration, read back through this schema. */
export const AlertDefinition = z.object(alertDeclarationFields).omit({ name: true, widget_id: true, cadence: true });
export type AlertDefinition = z.output<typeof AlertDefinition>;
