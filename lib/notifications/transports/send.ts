import "server-only";
import crypto from "node:crypto";
import nodemailer from "nodemailer";
import type Mail from "nodemailer/lib/mailer";
import { ErrorCode as SlackErrorCode, WebClient, type FetchFunction } from "@slack/web-api";
import { notificationsConfig } from "@/lib/config/notifications";
import type { ChannelKind } from "@/lib/notifications/channel-kinds";
import { isDemoOutbox } from "@/lib/notifications/transports/outbox-channel";
import { UnsafeTargetError, assertPublicHost, guardedFetch } from "@/lib/notifications/transports/url-guard";
import { headerText } from "@/lib/notifications/transports/header-text";

/** A channel as the sender needs it: settings and opened secrets (lib/notifications/settings/channels.ts). Never leaves the server. */
export interface ResolvedChannel {
  kind: ChannelKind;
  enabled: boolean;
  settings: Record<string, unknown>;
  secrets: Record<string, string>;
}

/** One message to one recipient on one channel. */
export interface OutboundMessage {
  /** Delivery id: the idempotency key receivers can deduplicate on (Message-ID, X-Quarry-Delivery). */
  id: string;
  recipient: string;
  subject: string;
  body: string;
  severity: string;
  ruleKey: string;
  sentAt: Date;
}

/** A failed send; `transient` ones are retried with backoff, others go straight to the dead letters. */
export class SendError extends Error {
  constructor(message: string, readonly transient: boolean) {
    super(message);
    this.name = "SendError";
  }
}

/**
 * One file of a scheduled report as a delivery sends it: the bytes e-mail attaches and Slack uploads, and the signed
 * download link (valid until `expiresAt`, never past the kept file) that Slack falls back to and webhooks carry.
 */
export interface ReportAttachment {
  format: "pdf" | "png";
  filename: string;
  contentType: string;
  bytes: Buffer;
  pages: number;
  url: string;
  expiresAt: Date;
}

/** A scheduled report to one recipient: e-mail attaches the files, Slack uploads them (or links them), webhooks link them. */
export interface ReportMessage extends OutboundMessage {
  scheduleId: string;
  files: ReportAttachment[];
  /** The recipient's unsubscribe URLs (e-mail): one-click for List-Unsubscribe, a page for the text. */
  unsubscribe?: { oneClick: string; page: string };
}

/** A widget alert to one recipient: the widget's picture in the recipient's scope (lib/alerts/delivery.ts). */
export interface AlertMessage extends OutboundMessage {
  alertId: string;
  picture: ReportAttachment;
}

/** Sends through an external channel (email, slack, webhook); `in_app` is written to the inbox by the caller. */
export async function sendExternal(channel: ResolvedChannel, message: OutboundMessage): Promise<void> {
  return guarded(channel, async () => {
    if (channel.kind === "email") return sendEmail(channel, message, { text: message.body, headers: { "X-Quarry-Rule": message.ruleKey, "X-Quarry-Severity": message.severity } });
    if (channel.kind === "slack") return sendSlack(channel, message);
    if (channel.kind === "webhook") return sendWebhook(channel, message);
    throw new SendError(`Channel ${channel.kind} has no external transport`, false);
  });
}

/** Sends a scheduled report (lib/reports/schedules-run.ts) through an external channel. */
export async function sendReport(channel: ResolvedChannel, message: ReportMessage): Promise<void> {
  return guarded(channel, async () => {
    const links = message.files.map((f) => `${f.filename} (${f.pages} ${f.pages === 1 ? "page" : "pages"}): ${f.url} (link valid until ${f.expiresAt.toISOString()})`);
    if (channel.kind === "email") {
      const unsubscribe = message.unsubscribe;
      return sendEmail(channel, message, {
        text: [message.body, "", `Attached: ${message.files.map((f) => f.filename).join(", ")}.`, ...(unsubscribe ? ["", `Stop receiving this report: ${unsubscribe.page}`] : [])].join("\n"),
        attachments: message.files.map((f) => ({ filename: f.filename, content: f.bytes, contentType: f.contentType })),
        // RFC 2369 and RFC 8058: mail clients offer "unsubscribe" and POST `List-Unsubscribe=One-Click` to the URL.
        headers: {
          "X-Quarry-Report": message.scheduleId,
          ...(unsubscribe ? { "List-Unsubscribe": `<${unsubscribe.oneClick}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" } : {}),
        },
      });
    }
    if (channel.kind === "slack") return sendSlackReport(channel, message, links);
    if (channel.kind === "webhook") return sendWebhookReport(channel, message);
    throw new SendError(`Channel ${channel.kind} has no external transport`, false);
  });
}

/**
 * Sends a widget alert (lib/alerts/delivery.ts) through an external channel: e-mail shows the picture inline (an HTML
 * part referring to it by Content-ID; clients without HTML show it attached), Slack uploads it (or links it, as a
 * report's files), webhooks link it.
 */
export async function sendAlert(channel: ResolvedChannel, message: AlertMessage): Promise<void> {
  return guarded(channel, async () => {
    const picture = message.picture;
    const link = `${picture.filename}: ${picture.url} (link valid until ${picture.expiresAt.toISOString()})`;
    if (channel.kind === "email") {
      const cid = `${message.id}.picture@quarry.alerts`;
      return sendEmail(channel, message, {
        text: message.body,
        html: alertHtml(message, cid),
        attachments: [{ filename: picture.filename, content: picture.bytes, contentType: picture.contentType, cid }],
        headers: { "X-Quarry-Alert": message.alertId, "X-Quarry-Severity": message.severity },
      });
    }
    if (channel.kind === "slack") return sendSlackReport(channel, { ...message, files: [picture] }, [link]);
    if (channel.kind === "webhook") {
      const body = JSON.stringify({
        id: message.id,
        type: "alert",
        alert_id: message.alertId,
        severity: message.severity,
        subject: message.subject,
        body: message.body,
        picture: { filename: picture.filename, content_type: picture.contentType, url: picture.url, expires_at: picture.expiresAt.toISOString() },
        sent_at: message.sentAt.toISOString(),
      });
      return postJson(String(channel.settings.url), body, signatureHeaders(channel, message, body), "Webhook");
    }
    throw new SendError(`Channel ${channel.kind} has no external transport`, false);
  });
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);

/** The alert's text as HTML (each line a paragraph, its links clickable) with the picture between headline and links. */
function alertHtml(message: AlertMessage, cid: string): string {
  const [headline, ...rest] = message.body.split("\n");
  const paragraph = (line: string) => `<p>${escapeHtml(line).replace(/https?:\/\/[^\s<]+/g, (url) => `<a href="${url}">${url}</a>`)}</p>`;
  const image = `<p><img src="cid:${cid}" alt="${escapeHtml(message.subject)}" style="max-width:100%"></p>`;
  return `<!doctype html><html><body>${paragraph(headline)}${image}${rest.filter((l) => l.trim() !== "").map(paragraph).join("")}</body></html>`;
}

async function guarded(channel: ResolvedChannel, send: () => Promise<void>): Promise<void> {
  if (isDemoOutbox(channel.settings)) {
    throw new SendError("The demo outbox sends nothing: what rules send appears in its list on this page. Configure a real provider to send.", false);
  }
  try {
    return await send();
  } catch (error) {
    if (error instanceof SendError) throw error;
    if (error instanceof UnsafeTargetError) throw new SendError(error.message, false);
    throw new SendError(error instanceof Error ? error.message : String(error), true);
  }
}

async function sendEmail(channel: ResolvedChannel, message: OutboundMessage, content: { text: string; html?: string; attachments?: Mail.Attachment[]; headers: Record<string, string> }) {
  const s = channel.settings as { host: string; port: number; secure: boolean; user?: string; from: string };
  // Connect to the address that was checked; the host name is still what TLS verifies (servername).
  const target = await assertPublicHost(s.host);
  const timeout = notificationsConfig().send_timeout_ms;
  const transport = nodemailer.createTransport({
    host: target.address,
    tls: { servername: target.host },
    port: s.port,
    secure: s.secure,
    auth: s.user ? { user: s.user, pass: channel.secrets.password ?? "" } : undefined,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  });
  // Header values built from stored text lose their control characters here, whatever the row holds.
  const headers = Object.fromEntries(Object.entries(content.headers).map(([name, value]) => [name, headerText(value)]));
  try {
    await transport.sendMail({
      from: s.from,
      to: message.recipient,
      subject: headerText(message.subject),
      messageId: `<${message.id}@quarry.notifications>`,
      text: content.text,
      html: content.html,
      headers,
      attachments: content.attachments?.map((a) => ({ ...a, filename: typeof a.filename === "string" ? headerText(a.filename) : a.filename })),
    });
  } catch (error) {
    const e = error as { code?: string; responseCode?: number; message?: string };
    // The reply code decides: 5xx will not fix itself, 4xx ("421 service not available", also on MAIL FROM or RCPT TO,
    // which nodemailer reports as EENVELOPE) may. Without one, bad credentials or a refused envelope are permanent,
    // connection trouble is not.
    const permanent = typeof e.responseCode === "number" ? e.responseCode >= 500 : e.code === "EAUTH" || e.code === "EENVELOPE";
    throw new SendError(`SMTP: ${e.message ?? String(error)}`, !permanent);
  } finally {
    transport.close();
  }
}

function slackClient(channel: ResolvedChannel) {
  const cfg = notificationsConfig();
  // guardedFetch checks the API host and pins the connection to the checked address on every call.
  return new WebClient(channel.secrets.bot_token, { slackApiUrl: cfg.slack_api_url, retryConfig: { retries: 0 }, timeout: cfg.send_timeout_ms, rejectRateLimitedCalls: true, fetch: slackFetch });
}

/** A Slack Web API error as a SendError: a platform error (channel_not_found, invalid_auth, ...) is an answer, not an outage. */
function slackFailure(error: unknown): SendError {
  return new SendError(`Slack: ${(error as Error).message}`, (error as { code?: string }).code !== SlackErrorCode.PlatformError);
}

/**
 * Slack reads `&`, `<` and `>` in a message's text as its own markup (`<!channel>` pings everyone, `<url|label>` is a
 * link under any label): subjects and bodies carry names an organization writes (rules, dashboards, locations), so
 * they are escaped as Slack's formatting reference asks. Slack shows the characters as written.
 */
const SLACK_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };
const slackText = (text: string) => text.replace(/[&<>]/g, (c) => SLACK_ESCAPES[c]);

async function sendSlack(channel: ResolvedChannel, message: OutboundMessage) {
  const text = `*[${message.severity.toUpperCase()}] ${slackText(message.subject)}*\n${slackText(message.body)}`;
  if (channel.settings.mode === "bot") {
    try {
      await slackClient(channel).chat.postMessage({ channel: String(channel.settings.channel), text });
    } catch (error) {
      throw slackFailure(error);
    }
    return;
  }
  await postJson(channel.secrets.webhook_url, JSON.stringify({ text }), {}, "Slack webhook");
}

/**
 * A report to Slack. A bot uploads the files to its channel (files.getUploadURLExternal, the bytes, then
 * files.completeUploadExternal); a bot that may not upload (no files:write, a channel given by name where an id
 * is needed) and an incoming webhook, which cannot upload at all, post the signed download links instead.
 */
async function sendSlackReport(channel: ResolvedChannel, message: OutboundMessage & Pick<ReportMessage, "files">, links: string[]) {
  const heading = `*${slackText(message.subject)}*\n${slackText(message.body)}`;
  const linked = `${heading}\n${links.map((l) => `• ${l}`).join("\n")}`;
  if (channel.settings.mode !== "bot") {
    await postJson(channel.secrets.webhook_url, JSON.stringify({ text: linked }), {}, "Slack webhook");
    return;
  }
  const client = slackClient(channel);
  const target = String(channel.settings.channel);
  try {
    const uploaded: { id: string; title: string }[] = [];
    for (const file of message.files) {
      const slot = await client.files.getUploadURLExternal({ filename: file.filename, length: file.bytes.length });
      if (!slot.upload_url || !slot.file_id) throw new Error("no upload URL");
      const put = await guardedFetch(slot.upload_url, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: file.bytes, signal: AbortSignal.timeout(notificationsConfig().send_timeout_ms) });
      if (!put.ok) throw new Error(`upload answered HTTP ${put.status}`);
      uploaded.push({ id: slot.file_id, title: file.filename });
    }
    await client.files.completeUploadExternal({ files: uploaded as [{ id: string; title: string }], channel_id: target, initial_comment: heading });
    return;
  } catch (error) {
    if (error instanceof UnsafeTargetError) throw error;
    // Not uploaded: the links say the same, and expire.
  }
  try {
    await client.chat.postMessage({ channel: target, text: linked });
  } catch (error) {
    throw slackFailure(error);
  }
}

/** The Slack client's fetch, through guardedFetch; postMessage sends a string body (file uploads, with FormData, are not used). */
const slackFetch: FetchFunction = (url, init) => {
  if (init?.body !== undefined && typeof init.body !== "string") return Promise.reject(new SendError("Slack: multipart uploads are not supported", false));
  return guardedFetch(url, { method: init?.method, headers: init?.headers, body: init?.body, signal: init?.signal });
};

async function sendWebhook(channel: ResolvedChannel, message: OutboundMessage) {
  const body = JSON.stringify({
    id: message.id,
    rule_key: message.ruleKey,
    severity: message.severity,
    subject: message.subject,
    body: message.body,
    sent_at: message.sentAt.toISOString(),
  });
  await postJson(String(channel.settings.url), body, signatureHeaders(channel, message, body), "Webhook");
}

async function sendWebhookReport(channel: ResolvedChannel, message: ReportMessage) {
  const body = JSON.stringify({
    id: message.id,
    type: "report",
    schedule_id: message.scheduleId,
    subject: message.subject,
    body: message.body,
    files: message.files.map((f) => ({ format: f.format, filename: f.filename, content_type: f.contentType, pages: f.pages, url: f.url, expires_at: f.expiresAt.toISOString() })),
    sent_at: message.sentAt.toISOString(),
  });
  await postJson(String(channel.settings.url), body, signatureHeaders(channel, message, body), "Webhook");
}

/** The webhook's signature over timestamp and body (docs/notifications.md), and the delivery id receivers deduplicate on. */
function signatureHeaders(channel: ResolvedChannel, message: OutboundMessage, body: string) {
  const timestamp = Math.floor(message.sentAt.getTime() / 1000);
  const signature = crypto.createHmac("sha256", channel.secrets.signing_secret).update(`${timestamp}.${body}`).digest("hex");
  return { "X-Quarry-Delivery": message.id, "X-Quarry-Signature": `t=${timestamp},v1=${signature}` };
}

async function postJson(rawUrl: string | undefined, body: string, headers: Record<string, string>, what: string) {
  if (!rawUrl) throw new SendError(`${what}: no URL configured`, false);
  let response: Response;
  try {
    response = await guardedFetch(rawUrl, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "Quarry-Notifications/1", ...headers },
      body,
      // A redirect could lead inward; guardedFetch never follows one, so it is reported as a failure.
      signal: AbortSignal.timeout(notificationsConfig().send_timeout_ms),
    });
  } catch (error) {
    if (error instanceof UnsafeTargetError) throw error;
    throw new SendError(`${what}: ${(error as Error).message}`, true);
  }
  if (response.ok) {
    await response.body?.cancel();
    return;
  }
  const text = (await response.text()).slice(0, 200);
  const transient = response.status === 408 || response.status === 429 || response.status >= 500;
  throw new SendError(`${what}: HTTP ${response.status}${text ? ` ${text}` : ""}`, transient);
}
