import { z } from "zod";

/** Channel kinds an organization can configure; `in_app` is always available. */
export const ChannelKind = z.enum(["email", "slack", "webhook", "in_app"]);
export type ChannelKind = z.infer<typeof ChannelKind>;

/** How the interface names each kind, everywhere it shows one (the API keeps the values: `in_app`, …). */
export const CHANNEL_LABELS: Record<ChannelKind, string> = { email: "Email", slack: "Slack", webhook: "Webhook", in_app: "In-app" };

/** The label of a kind; a value this build does not know is shown as sent. */
export const channelLabel = (kind: string): string => CHANNEL_LABELS[kind as ChannelKind] ?? kind;

const host = z.string().trim().min(1).max(253).regex(/^[A-Za-z0-9.\-:[\]]+$/, "Must be a host name or IP address");

/** What an admin sends per kind (PUT body `config`). Secret fields may be omitted to keep the stored value. */
export const EmailChannelInput = z.strictObject({
  host,
  port: z.number().int().min(1).max(65535).default(587),
  secure: z.boolean().default(false).describe("TLS from the first byte (port 465); otherwise STARTTLS when the server offers it"),
  user: z.string().min(1).max(320).optional(),
  password: z.string().min(1).max(1000).optional().describe("Secret: stored encrypted, returned masked; omit to keep the stored one"),
  from: z.email().describe("Sender address"),
});

export const SlackChannelInput = z.discriminatedUnion("mode", [
  z.strictObject({
    mode: z.literal("webhook"),
    webhook_url: z.url().optional().describe("Secret: a Slack incoming-webhook URL (https://hooks.slack.com/...); omit to keep the stored one"),
  }),
  z.strictObject({
    mode: z.literal("bot"),
    bot_token: z.string().regex(/^xox[bp]-[A-Za-z0-9-]+$/, "Must be a Slack bot token (xoxb-...)").optional().describe("Secret; omit to keep the stored one"),
    channel: z.string().regex(/^[#@]?[A-Za-z0-9._-]{1,80}$/, "Must be a channel name or id"),
  }),
]);

export const WebhookChannelInput = z.strictObject({
  url: z.url().describe("https URL receiving a JSON POST signed with HMAC-SHA256 (X-Quarry-Signature)"),
  signing_secret: z.string().min(16).max(256).optional().describe("Secret; omit to keep the stored one"),
});

export const InAppChannelInput = z.strictObject({});

export const CHANNEL_INPUTS = {
  email: EmailChannelInput,
  slack: SlackChannelInput,
  webhook: WebhookChannelInput,
  in_app: InAppChannelInput,
} as const;

/** Which fields of a kind's config are secrets (sealed at rest, masked in responses). */
export const SECRET_FIELDS: Record<ChannelKind, readonly string[]> = {
  email: ["password"],
  slack: ["webhook_url", "bot_token"],
  webhook: ["signing_secret"],
  in_app: [],
};

/** Secrets a kind cannot work without, given its settings. */
export function requiredSecrets(kind: ChannelKind, settings: Record<string, unknown>): string[] {
  if (kind === "slack") return [settings.mode === "bot" ? "bot_token" : "webhook_url"];
  if (kind === "webhook") return ["signing_secret"];
  return [];
}
