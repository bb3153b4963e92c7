import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { pageOf, pageQuery } from "@/lib/pagination";
import { AlertEvaluationView, AlertView, CreateAlertBody, UpdateAlertBody } from "./contract";

/*
 * The alerts API (issue 45): one endpoint per route of app/api/v1/alerts/** and of the pictures' signed links, over
 * the shapes of contract.ts. Every signed-in member may make alerts for themselves; an alert is seen by its owner,
 * its recipients and the editors whose scope covers it, and changed by its owner or an editor (lib/alerts/alerts.ts).
 * API keys are refused (the `Alerts` area is not one a key can be scoped to): an alert belongs to a person.
 */

const tags = ["Alerts"];
const IdParams = z.object({ id: z.string().min(1).max(100) });

/** The latest evaluations an alert's detail carries: what its history chart draws. */
export const DETAIL_EVALUATIONS = 200;

export const AlertDetailView = AlertView.extend({
  evaluations: z.array(AlertEvaluationView).describe(`the latest ${DETAIL_EVALUATIONS} evaluations in scopes the caller may see, newest first (all of them: GET …/evaluations)`),
}).meta({ id: "WidgetAlertDetail" });

export const ListAlertsQuery = pageQuery.extend({
  dashboard_id: z.string().min(1).max(200).optional().describe("Only this dashboard's alerts (its id)"),
});

export const SnoozeAlertBody = z
  .strictObject({
    until: z.iso.datetime().nullable().describe("ISO 8601; evaluated and recorded until then but nobody is told; null ends a snooze"),
  })
  .meta({ id: "WidgetAlertSnooze" });

export const MuteAlertBody = z.strictObject({ muted: z.boolean().describe("true: evaluated and recorded, nobody is told, until unmuted") }).meta({ id: "WidgetAlertMute" });

export const listAlerts = defineEndpoint({
  method: "get",
  path: "/api/v1/alerts",
  summary: "Widget alerts the caller may see",
  description: "Their own, those they receive, and (for editors) those within their scope; newest first, each with its states per scope.",
  tags,
  access: "user",
  query: ListAlertsQuery,
  response: pageOf(AlertView),
});

export const createAlert = defineEndpoint({
  method: "post",
  path: "/api/v1/alerts",
  summary: "Create an alert on a dashboard widget",
  description:
    "The declaration is the manifest's (`alerts:`): the widget and column watched, the condition, the filters captured from the screen (checked like the viewer's), optional `per` dimension and minimum volume, the cadence (cron in the organization's time zone, or on data change) and recipients. Each recipient is alerted in their own scope.",
  tags,
  access: "user",
  body: CreateAlertBody,
  response: AlertView,
  status: 201,
  errors: [403, 404, 422],
});

export const getAlert = defineEndpoint({
  method: "get",
  path: "/api/v1/alerts/{id}",
  summary: "One alert, its states and its latest evaluations",
  tags,
  access: "user",
  params: IdParams,
  response: AlertDetailView,
  errors: [404],
});

export const listAlertEvaluations = defineEndpoint({
  method: "get",
  path: "/api/v1/alerts/{id}/evaluations",
  summary: "An alert's evaluation history",
  description: "Every evaluation (value, threshold, change, met or not, state, which source answered) in scopes the caller may see, newest first.",
  tags,
  access: "user",
  params: IdParams,
  query: pageQuery,
  response: pageOf(AlertEvaluationView),
  errors: [404],
});

export const updateAlert = defineEndpoint({
  method: "patch",
  path: "/api/v1/alerts/{id}",
  summary: "Edit an alert",
  description: "Fields left out keep their value. An alert declared in a dashboard manifest is edited by pushing the manifest (409), except its mute and snooze.",
  tags,
  access: "user",
  params: IdParams,
  body: UpdateAlertBody,
  response: AlertView,
  errors: [403, 404, 409, 422],
});

export const deleteAlert = defineEndpoint({
  method: "delete",
  path: "/api/v1/alerts/{id}",
  summary: "Delete an alert and its history",
  tags,
  access: "user",
  params: IdParams,
  status: 204,
  errors: [403, 404, 409],
});

export const snoozeAlert = defineEndpoint({
  method: "post",
  path: "/api/v1/alerts/{id}/snooze",
  summary: "Snooze an alert until a time",
  description: "Evaluations go on and are recorded; nobody is told until then. A state still firing afterwards is told at the next evaluation.",
  tags,
  access: "user",
  params: IdParams,
  body: SnoozeAlertBody,
  response: AlertView,
  errors: [403, 404, 422],
});

export const muteAlert = defineEndpoint({
  method: "post",
  path: "/api/v1/alerts/{id}/mute",
  summary: "Mute or unmute an alert",
  tags,
  access: "user",
  params: IdParams,
  body: MuteAlertBody,
  response: AlertView,
  errors: [403, 404, 422],
});

export const testAlert = defineEndpoint({
  method: "post",
  path: "/api/v1/alerts/{id}/test",
  summary: "Test an alert now",
  description: "Evaluates it in every recipient scope as a scheduled evaluation would and records the evaluations (trigger `test`); moves no state and sends nothing. Answers the evaluations in scopes the caller may see.",
  tags,
  access: "user",
  params: IdParams,
  response: z.object({ evaluations: z.array(AlertEvaluationView) }),
  errors: [404],
  rateLimit: { limit: 20, windowSeconds: 60 },
});

export const openAlertPicture = defineEndpoint({
  method: "get",
  path: "/api/v1/alert-pictures/{token}",
  summary: "An alert message's picture, behind a signed link",
  description: "The widget the alert watches, drawn as a PNG in the scope of the message's recipients, under the alert's filters, when the link is opened. The token names one message and expires (410). No sign-in.",
  tags,
  access: "public",
  credentials: "none",
  params: z.object({ token: z.string().min(20).max(2000).describe("The signed token from the link") }),
  produces: "image/png",
  errors: [401, 404, 410, 503],
  rateLimit: { limit: 60, windowSeconds: 60 },
});
