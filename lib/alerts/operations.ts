import "server-only";
import { Unavailable, notFound } from "@/lib/errors";
import { storedFileResponse } from "@/lib/file-response";
import { defineOperation } from "@/lib/operation";
import * as alerts from "./alerts";
import { PictureUnavailable, alertPicture } from "./delivery";
import * as endpoints from "./api-contract";
import { readPictureLink } from "./links";

// The edge of widget alerts: one defineOperation per endpoint of endpoints.ts, each a call into the service.

export const listAlerts = defineOperation(endpoints.listAlerts, ({ principal, query }) => alerts.listAlerts(principal, query));

export const createAlert = defineOperation(endpoints.createAlert, ({ principal, body }) => alerts.createAlert(principal, body, new Date()));

export const getAlert = defineOperation(endpoints.getAlert, async ({ principal, params }) => {
  const alert = await alerts.getAlert(principal, params.id);
  const history = await alerts.alertHistory(principal, params.id, { limit: endpoints.DETAIL_EVALUATIONS, offset: 0 });
  return { ...alert, evaluations: history.items };
});

export const listAlertEvaluations = defineOperation(endpoints.listAlertEvaluations, ({ principal, params, query }) => alerts.alertHistory(principal, params.id, query));

export const updateAlert = defineOperation(endpoints.updateAlert, ({ principal, params, body }) => alerts.updateAlert(principal, params.id, body, new Date()));

export const deleteAlert = defineOperation(endpoints.deleteAlert, ({ principal, params }) => alerts.deleteAlert(principal, params.id));

export const snoozeAlert = defineOperation(endpoints.snoozeAlert, ({ principal, params, body }) => alerts.updateAlert(principal, params.id, { snoozed_until: body.until }, new Date()));

export const muteAlert = defineOperation(endpoints.muteAlert, ({ principal, params, body }) => alerts.updateAlert(principal, params.id, { muted: body.muted }, new Date()));

export const testAlert = defineOperation(endpoints.testAlert, async ({ principal, params }) => ({ evaluations: await alerts.testAlert(principal, params.id, new Date()) }));

export const openAlertPicture = defineOperation(endpoints.openAlertPicture, async ({ params }) => {
  const { orgId, messageId } = await readPictureLink(params.token);
  try {
    const file = await alertPicture(orgId, messageId);
    return storedFileResponse(file, "inline");
  } catch (error) {
    if (!(error instanceof PictureUnavailable)) throw error;
    if (error.why === "gone") throw notFound("Alert");
    // A scope that may no longer see the widget gets what a stranger gets: nothing that says why.
    if (error.why === "denied") throw notFound("Picture");
    throw new Unavailable(error.message, 30);
  }
});
