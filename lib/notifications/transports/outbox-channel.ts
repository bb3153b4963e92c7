/**
 * The embedded demo's e-mail and Slack (issue 32): offline there is no SMTP server or Slack to reach, so the demo's
 * organizations get e-mail and Slack channels whose messages are kept in Quarry, readable by their admins, and never
 * sent; the spec's example rule (in_app + email + slack), e-mail groups and subscriptions then work end to end. Seeded
 * with the demo data (QUARRY_SEED_DEMO, on by default) for each of the two kinds an organization has not configured,
 * and replaced for good when an admin saves a real provider (the API accepts only real settings, so nothing but the
 * seed makes an outbox).
 *
 * Here, in the lowest room, is only what marks such a channel and its deliveries: the transports refuse to send
 * through it and the pipeline keeps its messages instead. Its list and its seed are admin/demo-outbox.ts.
 */
export const DEMO_OUTBOX_KINDS = ["email", "slack"] as const;
export const DEMO_OUTBOX_REASON = "kept in the demo outbox";

export const isDemoOutbox = (settings: unknown): boolean => (settings as { demo_outbox?: unknown } | null)?.demo_outbox === true;

/** The reason a delivery kept in the outbox carries (also how the outbox finds its mail). */
export const demoOutboxReason = (attempt: number) => `${DEMO_OUTBOX_REASON} on attempt ${attempt} (the demo's channel: nothing was sent)`;
