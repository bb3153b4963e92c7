import "server-only";
import { findOrganization, type OrgIdentity, type OrgProfile } from "@/lib/auth/directory";
import { grantForPrincipal, type GrantedDashboard } from "@/lib/dashboards/policy";
import { orgView, viewColumnFormats } from "@/lib/dashboards/wiring";
import { withTenant } from "@/lib/db/tenant";
import type { WidgetAlert, WidgetAlertMessage } from "@/lib/db/generated/client";
import { DomainError, Forbidden, Invalid, NotFound } from "@/lib/errors";
import { log } from "@/lib/log";
import { fanOut, type DeliveryTarget } from "@/lib/notifications/pipeline/fan-out";
import type { AlertPicture, Runtime } from "@/lib/notifications/pipeline/runtime";
import { loadOptOuts } from "@/lib/notifications/settings/opt-outs";
import { pictureLine } from "@/lib/notifications/transports/picture-line";
import { SendError } from "@/lib/notifications/transports/send";
import { describeScope, locationNames } from "@/lib/reports/schedules-run";
import { parseScopeKey, scopePrincipal } from "@/lib/reports/schedules-scope";
import { AlertMessageKind, AlertMessageTarget } from "./contract";
import type { AlertDelivery } from "./evaluate";
import { PICTURE_LINK_SECONDS, pictureLink } from "./links";
import { alertText, type AlertFinding } from "./message";
import { alertRecord } from "./record";
import { watchedColumn } from "./words";
import { claimAlertMessage } from "./state";

/**
 * The delivery step of widget alerts (issue 45 §4): a message an evaluation owes (widget_alert_messages) becomes
 * deliveries through the notification pipeline's one fan-out (dedupe, quiet hours, opt-outs, retries, dead letters),
 * claimed once inside the fan-out's transaction; each delivery attempt then draws the widget in the message's scope
 * with the report renderer (alertPicture). The text is written once per message, in the scope its recipients share.
 */

const SEVERITY: Record<AlertMessageKind, string> = { firing: "warning", renotify: "warning", resolved: "info" };

/** The AlertDelivery evaluations hand their messages to, on this runtime's queue and clock. */
export function alertDelivery(rt: Runtime): AlertDelivery {
  return async (orgId, messageIds) => {
    for (const id of messageIds) await dispatchAlertMessage(rt, orgId, id);
  };
}

interface Loaded {
  message: WidgetAlertMessage;
  alert: WidgetAlert;
  evaluation: { value: number | null; previousValue: number | null; change: number | null };
  dashboard: { name: string; slug: string };
}

const numberOrNull = (value: { toNumber(): number } | null) => (value === null ? null : value.toNumber());

async function loadMessage(orgId: string, messageId: string): Promise<Loaded | null> {
  return withTenant({ orgId }, async (tx) => {
    const message = await tx.widgetAlertMessage.findUnique({ where: { id: messageId } });
    if (!message || message.dispatchedAt) return null;
    const [alert, evaluation] = await Promise.all([tx.widgetAlert.findUnique({ where: { id: message.alertId } }), tx.widgetAlertEvaluation.findUnique({ where: { id: message.evaluationId } })]);
    if (!alert || !evaluation) return null;
    const dashboard = await tx.dashboard.findUnique({ where: { id: alert.dashboardId }, select: { name: true, slug: true } });
    if (!dashboard) return null;
    return { message, alert, dashboard, evaluation: { value: numberOrNull(evaluation.value), previousValue: numberOrNull(evaluation.previousValue), change: numberOrNull(evaluation.change) } };
  });
}

/** The published dashboard as the message's scope sees it, or why that scope no longer may. */
async function grantInScope(org: OrgIdentity, alert: WidgetAlert, scopeKeyText: string): Promise<GrantedDashboard | string> {
  const scope = parseScopeKey(scopeKeyText);
  if (!scope) return `unreadable scope '${scopeKeyText}'`;
  try {
    const granted = await grantForPrincipal(scopePrincipal(org, alert.ownerId, scope), alert.dashboardId, "published");
    return granted.parsed.ok ? granted : "the published version no longer passes Quarry's checks";
  } catch (error) {
    if (error instanceof DomainError) return `the recipients' scope may no longer view this dashboard (${error.message})`;
    throw error;
  }
}

/** The text of one message, or why it cannot be told (its widget is gone, its scope lost the dashboard). */
async function messageText(org: OrgProfile, loaded: Loaded, now: Date): Promise<{ subject: string; body: string } | { problem: string }> {
  const { message, alert, evaluation, dashboard } = loaded;
  const granted = await grantInScope(org, alert, message.scopeKey);
  if (typeof granted === "string") return { problem: granted };
  if (!granted.parsed.ok) return { problem: "the published version no longer passes Quarry's checks" };
  const view = orgView(granted.parsed.value, org.currency);
  const widget = view.widgets.find((w) => w.metadata.id === alert.widgetId);
  if (!widget) return { problem: `the widget '${alert.widgetId}' is no longer on the published dashboard` };
  const { definition } = alertRecord(alert);
  const finding: AlertFinding = {
    alertId: alert.id,
    alertName: alert.name,
    kind: AlertMessageKind.parse(message.kind),
    condition: definition.condition,
    dashboard,
    widget,
    column: watchedColumn(widget, definition.column),
    formats: viewColumnFormats(view, widget),
    filters: definition.filters,
    dimension: definition.per && message.dimensionValue !== "" ? { column: definition.per, value: message.dimensionValue } : null,
    ...evaluation,
    scope: describeScope(parseScopeKey(message.scopeKey)!, await withTenant({ orgId: org.id }, locationNames)),
  };
  const text = alertText(finding);
  const expiresAt = new Date(now.getTime() + PICTURE_LINK_SECONDS * 1000);
  const picture = await pictureLink({ orgId: org.id, messageId: message.id }, expiresAt);
  return { subject: text.subject, body: `${text.body}\n${pictureLine(widget.metadata.name, picture, expiresAt)}` };
}

/**
 * Fans one message out, once: its text is written before the claim (reading the published manifest in the message's
 * scope), then, in the fan-out's transaction, the message is claimed (a second hand-off finds it claimed and sends
 * nothing) and its targets become deliveries; opted-out recipients (a user or address that unsubscribed from all
 * notifications) and every target of a scope that lost the dashboard are recorded as skipped.
 */
export async function dispatchAlertMessage(rt: Runtime, orgId: string, messageId: string): Promise<number> {
  const [org, loaded] = await Promise.all([findOrganization(orgId), loadMessage(orgId, messageId)]);
  if (!org || !loaded) return 0;
  const now = rt.clock.now();
  const text = await messageText(org, loaded, now);
  if ("problem" in text) log.info("widget alert message not told", { orgId, messageId, reason: text.problem });
  return fanOut(rt, orgId, now, async (tx) => {
    const message = await claimAlertMessage(tx, messageId, now);
    if (!message) return null;
    const optOuts = await loadOptOuts(tx);
    const targets: DeliveryTarget[] = AlertMessageTarget.array()
      .parse(message.targets)
      .map((t) => {
        const optedOut = optOuts.fromRule(message.alertId, { userId: t.user_id ?? undefined, address: t.channel === "email" ? t.recipient : undefined });
        const skipReason = t.skip_reason ?? ("problem" in text ? text.problem : (optedOut ?? undefined));
        return { channel: t.channel, recipient: t.recipient, skipReason, reportScope: message.scopeKey };
      });
    return {
      origin: { alertMessageId: message.id },
      subject: "problem" in text ? `${loaded.alert.name}: not told` : text.subject,
      body: "problem" in text ? text.problem : text.body,
      severity: SEVERITY[AlertMessageKind.parse(message.kind)],
      dedupeKey: message.dedupeKey,
      targets,
    };
  });
}

/** A PNG of one widget is this wide (pixels): legible in a mail client's reading pane. */
const PICTURE_WIDTH = 800;

/**
 * The widget of a message drawn by the report renderer as a PNG, in the message's scope and under the alert's
 * filters: through the same policy, cache and row-level security as the viewer. Loaded on first use, so routes that
 * only queue jobs do not load fonts and ECharts.
 */
export async function alertPicture(orgId: string, messageId: string): Promise<{ alertId: string; bytes: Uint8Array; contentType: string; filename: string; pages: number }> {
  const org = await findOrganization(orgId);
  const loaded = await withTenant({ orgId }, async (tx) => {
    const message = await tx.widgetAlertMessage.findUnique({ where: { id: messageId }, select: { alertId: true, scopeKey: true } });
    const alert = message ? await tx.widgetAlert.findUnique({ where: { id: message.alertId } }) : null;
    return message && alert ? { message, alert } : null;
  });
  if (!org || !loaded) throw new PictureUnavailable("The alert was deleted", "gone");
  const scope = parseScopeKey(loaded.message.scopeKey);
  if (!scope) throw new PictureUnavailable(`Unreadable scope '${loaded.message.scopeKey}'`, "gone");
  const { renderDashboardReport } = await import("@/lib/reports/render");
  try {
    const file = await renderDashboardReport(scopePrincipal(org, loaded.alert.ownerId, scope), {
      dashboardId: loaded.alert.dashboardId,
      filters: alertRecord(loaded.alert).definition.filters,
      format: "png",
      widget: loaded.alert.widgetId,
      width: PICTURE_WIDTH,
    });
    return { alertId: loaded.alert.id, ...file, filename: `${loaded.alert.widgetId}-${file.filename}` };
  } catch (error) {
    // No retry mends a scope that may not see the dashboard or a widget no longer on it.
    if (error instanceof Forbidden || error instanceof NotFound || error instanceof Invalid) throw new PictureUnavailable(`The message's scope may not draw this widget: ${error.message}`, "denied");
    throw new PictureUnavailable(`Drawing the widget failed: ${(error as Error).message}`, "retry");
  }
}

/** Why a picture cannot be had: its alert or message is gone, its scope may not draw it (both for good), or drawing failed (worth a retry). */
export class PictureUnavailable extends Error {
  constructor(
    message: string,
    readonly why: "gone" | "denied" | "retry",
  ) {
    super(message);
    this.name = "PictureUnavailable";
  }
}

/** A delivery's picture (the pipeline's alert hook): drawn now, with a signed link for channels that link it. */
export async function deliveryPicture(rt: Runtime, delivery: { orgId: string; alertMessageId: string | null }): Promise<AlertPicture> {
  if (!delivery.alertMessageId) throw new SendError("Not an alert delivery", false);
  try {
    const file = await alertPicture(delivery.orgId, delivery.alertMessageId);
    const expiresAt = new Date(rt.clock.now().getTime() + PICTURE_LINK_SECONDS * 1000);
    const url = await pictureLink({ orgId: delivery.orgId, messageId: delivery.alertMessageId }, expiresAt);
    return { alertId: file.alertId, picture: { format: "png", filename: file.filename, contentType: file.contentType, bytes: Buffer.from(file.bytes), pages: file.pages, url, expiresAt } };
  } catch (error) {
    if (error instanceof PictureUnavailable) throw new SendError(error.message, error.why === "retry");
    throw error;
  }
}
