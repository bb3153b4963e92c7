import { z } from "zod";
import { AlertCondition, alertDeclarationFields } from "@/lib/manifest/alert";

/**
 * Widget alerts (issue 45): the API's shapes. The declaration itself is the manifest language's
 * (lib/manifest/alert.ts): an alert created from the viewer and one declared under a dashboard's `alerts:` are
 * the same object, validated by the same schema; the API adds the dashboard it belongs to and the operational
 * switches (mute, snooze) that a manifest push never touches.
 */

const ts = z.iso.datetime().describe("ISO 8601, UTC");

export { AlertCondition };
export type { AlertCadence, AlertRecipients, ChangePeriod } from "@/lib/manifest/alert";

/** Switches a recipient or owner flips without editing the alert; a manifest push keeps them. */
const operationalFields = {
  muted: z.boolean().default(false).describe("evaluated and recorded, but nobody is told"),
  snoozed_until: ts.nullable().default(null).describe("until then evaluated and recorded, but nobody is told; a state still firing afterwards is told at the next evaluation"),
  shared_approved: z
    .boolean()
    .default(false)
    .describe(
      "Admins only: lets email-group addresses that are no users, Slack and the webhook receive the alert in its shared scope (its creator's role and locations), for the dashboard version published now, as report schedules do. Reset when an editor changes who receives it",
    ),
};

export const CreateAlertBody = z
  .strictObject({
    dashboard_id: z.string().min(1).max(200).describe("the dashboard (id or slug); alerts watch its published version"),
    ...alertDeclarationFields,
    ...operationalFields,
  })
  .meta({ id: "WidgetAlertInput" });
export type CreateAlertBody = z.output<typeof CreateAlertBody>;
/** What a caller sends (defaults not yet applied): what the viewer's "Alert me" form builds. */
export type CreateAlertInput = z.input<typeof CreateAlertBody>;

const editable = { ...alertDeclarationFields, ...operationalFields };
// Defaults belong to creation: inside optional() zod 4 still fills them in, so an edit leaving `muted` out would unmute.
const leftOut = (field: z.ZodType) => (field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : field).optional();
export const UpdateAlertBody = z
  .strictObject(Object.fromEntries(Object.entries(editable).map(([k, v]) => [k, leftOut(v)])) as { [K in keyof typeof editable]: z.ZodOptional<(typeof editable)[K]> })
  .refine((b) => Object.values(b).some((v) => v !== undefined), "Give at least one field to change")
  .meta({ id: "WidgetAlertUpdate" });
export type UpdateAlertBody = z.output<typeof UpdateAlertBody>;

export const AlertStateName = z.enum(["ok", "firing", "resolved"]).describe("resolved: was firing and is no longer; the next met evaluation fires again");
export type AlertStateName = z.infer<typeof AlertStateName>;

/**
 * What one evaluation found for one scope and dimension value. `met` is null when the condition could not be
 * judged (no value to compare, below the minimum volume, or the widget's query failed), so a history tells
 * "not met" from "not judged".
 */
export const EvaluationOutcome = z.enum(["met", "not_met", "no_data", "below_min_volume", "error"]);
export type EvaluationOutcome = z.infer<typeof EvaluationOutcome>;

export const AlertEvaluationView = z
  .object({
    id: z.string(),
    alert_id: z.string(),
    evaluated_at: ts,
    trigger: z.enum(["cron", "data_change", "test"]).describe("test: a 'test now' evaluation, which sends nothing and moves no state"),
    scope_key: z.string().describe("the recipients' role and locations the value was computed in (role:loc1,loc2 or role:*)"),
    dimension_value: z.string().nullable().describe("the `per` dimension's value; null without `per`"),
    value: z.number().nullable(),
    previous_value: z.number().nullable().describe("a change condition's value of the previous aligned period"),
    change: z.number().nullable().describe("value minus previous (absolute), or as a percentage of |previous| (percent)"),
    threshold: z.number().nullable().describe("above/below: the threshold; outside: low; change: the amount"),
    threshold_high: z.number().nullable().describe("outside: high"),
    outcome: EvaluationOutcome,
    met: z.boolean().nullable(),
    state: AlertStateName.describe("the state after this evaluation (a test reports what it would be)"),
    source: z.enum(["rollup", "base"]).nullable().describe("which source answered the widget's query: a rollup or the tables"),
    rollup: z.string().nullable().describe("the rollup's name when one answered"),
    error: z.string().nullable(),
  })
  .meta({ id: "WidgetAlertEvaluation" });
export type AlertEvaluationView = z.infer<typeof AlertEvaluationView>;

export const AlertStateView = z
  .object({
    scope_key: z.string(),
    dimension_value: z.string().nullable(),
    state: AlertStateName,
    since: ts.describe("when it entered this state"),
    last_value: z.number().nullable(),
    last_evaluated_at: ts.nullable(),
    last_notified_at: ts.nullable(),
  })
  .meta({ id: "WidgetAlertState" });
export type AlertStateView = z.infer<typeof AlertStateView>;

export const AlertView = CreateAlertBody.omit({ dashboard_id: true })
  .extend({
    id: z.string(),
    dashboard_id: z.string(),
    dashboard_slug: z.string(),
    dashboard_name: z.string(),
    widget_name: z.string().nullable().describe("the watched widget's name on the published dashboard; null when it is no longer there"),
    condition_text: z.string().describe('the condition in words, its figures in the watched column\'s format as the published dashboard shows it ("below $2,500.00"; a grouped number when the widget is gone)'),
    manifest_id: z.string().nullable().describe("the alert's id under the dashboard manifest's `alerts:` when declared there (edited by pushing the manifest); null for alerts made in the app"),
    owner_id: z.string().describe("who created it (or pushed the manifest declaring it): `me` among the recipients"),
    states: z.array(AlertStateView).describe("one per recipient scope and dimension value seen so far"),
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: "WidgetAlert" });
export type AlertView = z.infer<typeof AlertView>;

/**
 * A message an evaluation owes its recipients (a row of alert_messages), written in the same transaction as the
 * state move it reports, under a unique dedupe key: a retried evaluation finds it and writes nothing twice. The
 * delivery step (lib/alerts/README.md, "Delivery boundary") renders and fans it out, claiming it once.
 */
export const AlertMessageKind = z.enum(["firing", "renotify", "resolved"]);
export type AlertMessageKind = z.infer<typeof AlertMessageKind>;

/** One channel and recipient of a message, resolved at evaluation time in the message's scope. */
export const AlertMessageTarget = z.object({
  channel: z.enum(["email", "in_app", "slack", "webhook"]),
  recipient: z.string().describe("an e-mail address, a user id (in_app), the Slack channel or the webhook host"),
  user_id: z.string().nullable().describe("the user this target is, when it is one"),
  skip_reason: z.string().optional().describe("recorded as a skipped delivery, never sent (e.g. the shared scope is not approved)"),
});
export type AlertMessageTarget = z.infer<typeof AlertMessageTarget>;
