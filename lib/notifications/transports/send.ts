import "server-only";
import crypto from "node:crypto";
import nodemailer from "nodemailer";
import { ErrorCode as SlackErrorCode, WebClient, type FetchFunction } from "@slack/web-api";
import { notificationsConfig } from "@/lib/config/notifications";
import type { ResolvedChannel } from "@/lib/notifications/admin/channels";
import { isDemoOutbox } from "@/lib/notifications/admin/demo-outbox";
import { UnsafeTargetError, assertPublicHost, guardedFetch } from "@/lib/notifications/transports/url-guard";

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

/** Sends through an external channel (email, slack, webhook); `in_app` is written to the inbox by the caller. */
export async function sendExternal(channel: ResolvedChannel, message: OutboundMessage): Promise<void> {
  if (isDemoOutbox(channel.settings)) {
    throw new SendError("The demo outbox sends nothing: what rules send appears in its list on this page. Configure a real provider to send.", false);
  }
  try {
    if (channel.kind === "email") return await sendEmail(channel, message);
    if (channel.kind === "slack") return await sendSlack(channel, message);
    if (channel.kind === "webhook") return await sendWebhook(channel, message);
    throw new SendError(`Channel ${channel.kind} has no external transport`, false);
  } catch (error) {
    if (error instanceof SendError) throw error;
    if (error instanceof UnsafeTargetError) throw new SendError(error.message, false);
    throw new SendError(error instanceof Error ? error.message : String(error), true);
  }
}

async function sendEmail(channel: ResolvedChannel, message: OutboundMessage) {
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
  try {
    await transport.sendMail({
      from: s.from,
      to: message.recipient,
      subject: message.subject,
      text: message.body,
      messageId: `<${message.id}@quarry.notifications>`,
      headers: { "X-Quarry-Rule": message.ruleKey, "X-Quarry-Severity": message.severity },
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

async function sendSlack(channel: ResolvedChannel, message: OutboundMessage) {
  const text = `*[${message.severity.toUpperCase()}] ${message.subject}*\n${message.body}`;
  if (channel.settings.mode === "bot") {
    const cfg = notificationsConfig();
    // guardedFetch checks the API host and pins the connection to the checked address on every call.
    const client = new WebClient(channel.secrets.bot_token, { slackApiUrl: cfg.slack_api_url, retryConfig: { retries: 0 }, timeout: cfg.send_timeout_ms, rejectRateLimitedCalls: true, fetch: slackFetch });
    try {
      await client.chat.postMessage({ channel: String(channel.settings.channel), text });
    } catch (error) {
      const code = (error as { code?: string }).code;
      // A platform error (channel_not_found, invalid_auth, ...) is an answer, not an outage.
      throw new SendError(`Slack: ${(error as Error).message}`, code !== SlackErrorCode.PlatformError);
    }
    return;
  }
  await postJson(channel.secrets.webhook_url, JSON.stringify({ text }), {}, "Slack webhook");
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
  const timestamp = Math.floor(message.sentAt.getTime() / 1000);
  const signature = crypto.createHmac("sha256", channel.secrets.signing_secret).update(`${timestamp}.${body}`).digest("hex");
  await postJson(String(channel.settings.url), body, { "X-Quarry-Delivery": message.id, "X-Quarry-Signature": `t=${timestamp},v1=${signature}` }, "Webhook");
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
