import "server-only";
import type { TenantTx } from "@/lib/db/tenant";
import { ChannelKind } from "@/lib/notifications/channel-kinds";
import type { QuietWindow } from "@/lib/notifications/contract";

const DAY_MINUTES = 24 * 60;
const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Minutes since local midnight of `at` in `timeZone` (an IANA zone). */
function localMinutes(at: Date, timeZone: string): number {
  const parts = new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).formatToParts(at);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return get("hour") * 60 + get("minute");
}

/**
 * When `at` falls inside the window (local wall-clock times in `timeZone`,
 * start inclusive, end exclusive, wrapping past midnight when end < start),
 * the instant the window ends; otherwise null.
 */
export function quietUntil(window: QuietWindow, at: Date, timeZone: string): Date | null {
  const now = localMinutes(at, timeZone);
  const start = minutesOf(window.start);
  const end = minutesOf(window.end);
  const inside = start < end ? now >= start && now < end : now >= start || now < end;
  if (!inside) return null;
  const minuteStart = at.getTime() - (at.getTime() % 60_000);
  return new Date(minuteStart + ((end - now + DAY_MINUTES) % DAY_MINUTES) * 60_000);
}

/** An IANA zone Intl accepts, else UTC (organizations.time_zone is free text). */
function usableZone(zone: string): string {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return zone;
  } catch {
    return "UTC";
  }
}

export interface QuietHoursPolicy {
  timeZone: string;
  org: QuietWindow | null;
  channels: Partial<Record<ChannelKind, QuietWindow>>;
}

/** The organization's quiet hours as the pipeline applies them: a channel's own window wins over the org's. */
export async function loadQuietHours(tx: TenantTx): Promise<QuietHoursPolicy> {
  const [org, rows] = await Promise.all([tx.organization.findFirst({ select: { timeZone: true } }), tx.notificationQuietHours.findMany()]);
  const policy: QuietHoursPolicy = { timeZone: usableZone(org?.timeZone ?? "UTC"), org: null, channels: {} };
  for (const row of rows) {
    const window: QuietWindow = { start: row.startTime, end: row.endTime, action: row.action === "skip" ? "skip" : "defer" };
    if (row.scope === "org") policy.org = window;
    else policy.channels[ChannelKind.parse(row.scope)] = window;
  }
  return policy;
}

export const windowFor = (policy: QuietHoursPolicy, channel: ChannelKind) => policy.channels[channel] ?? policy.org;

/** What quiet hours make of a delivery created at `now`: nothing, a later start, or a skip. */
export function quietOutcome(policy: QuietHoursPolicy, channel: ChannelKind, now: Date): { skip: string } | { deferTo: Date; reason: string } | null {
  const window = windowFor(policy, channel);
  const until = window ? quietUntil(window, now, policy.timeZone) : null;
  if (!window || !until) return null;
  const label = `quiet hours ${window.start}–${window.end} ${policy.timeZone}`;
  return window.action === "skip" ? { skip: label } : { deferTo: until, reason: `deferred by ${label}; sends at ${until.toISOString()}` };
}
