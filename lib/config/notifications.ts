import "server-only";
import { z } from "zod";
import { ConfigError, jsonEnv } from "./schema";

/**
 * `NOTIFICATIONS_CONFIG` (JSON): delivery policy and outbound-URL safety for
 * lib/notifications. Every field has a default; the variable may be unset.
 */
export const NotificationsConfigSchema = z.object({
  /** Hosts (names or IP literals) that channel URLs and SMTP servers may use even when private or loopback, over plain http too. */
  url_allow_list: z.array(z.string().min(1)).default([]),
  /** Hosts accepted for Slack incoming webhooks (https only). */
  slack_webhook_hosts: z.array(z.string().min(1)).default(["hooks.slack.com"]),
  /** Base URL of the Slack Web API used in bot-token mode. */
  slack_api_url: z.url().default("https://slack.com/api/"),
  /** Attempts per delivery before it becomes a dead letter. */
  max_attempts: z.number().int().min(1).max(20).default(6),
  /** Exponential backoff: base * 2^(attempt-1), capped. */
  backoff_base_seconds: z.number().int().min(1).default(30),
  backoff_max_seconds: z.number().int().min(1).default(3600),
  /** A delivery with the same rule, finding, channel and recipient inside this window is skipped as deduplicated. */
  dedupe_window_minutes: z.number().int().min(0).default(60),
  /** Time limit for one outbound send. */
  send_timeout_ms: z.number().int().min(100).default(10_000),
  /** Run the queue worker inside the web process (embedded default). Set false when `npm run worker` runs beside a server database. */
  in_process_worker: z.boolean().default(true),
  /**
   * How long a claimed delivery may stay unfinished before another worker takes it over (a worker
   * killed mid-send). Longer than send_timeout_ms; the same for every worker of a deployment.
   */
  delivery_lease_seconds: z.number().int().min(2).max(3600).default(120),
});
export type NotificationsConfig = z.output<typeof NotificationsConfigSchema>;

let cached: NotificationsConfig | undefined;

/** Parses NOTIFICATIONS_CONFIG; throws ConfigError naming the variable and field. */
export function loadNotificationsConfig(env: Record<string, string | undefined>): NotificationsConfig {
  const parsed = jsonEnv("NOTIFICATIONS_CONFIG", NotificationsConfigSchema).safeParse(env.NOTIFICATIONS_CONFIG);
  if (!parsed.success) throw new ConfigError(`Invalid configuration:\n  ${parsed.error.issues.map((i) => i.message).join("\n  ")}`);
  return parsed.data ?? NotificationsConfigSchema.parse({});
}

/** Parsed once per process; an invalid variable throws naming the field. */
export function notificationsConfig(): NotificationsConfig {
  cached ??= loadNotificationsConfig(process.env);
  return cached;
}
