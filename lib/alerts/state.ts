import "server-only";
import type { TenantTx } from "@/lib/db/tenant";
import type { WidgetAlertMessage } from "@/lib/db/generated/client";
import { newId } from "@/lib/ids";
import type { AlertMessageKind, AlertMessageTarget, AlertStateName, EvaluationOutcome } from "./contract";

/**
 * State, not spam (issue 45 §3): each alert per recipient scope and dimension value moves between ok, firing and
 * resolved, and a message is owed only when the move (or the re-notify interval) says so. The decision is a pure
 * function (nextState); recordEvaluation writes the evaluation, the state and the message in one transaction.
 */

export interface StateNow {
  state: AlertStateName;
  /** When it entered `state`. */
  since: Date;
  lastNotifiedAt: Date | null;
}

export interface NotifyRules {
  notifyOnResolved: boolean;
  /** While still firing, tell again after this many minutes; null: never. */
  renotifyMinutes: number | null;
  onlyOnce: boolean;
  /** Muted or snoozed now: the state moves and is recorded, nobody is told. */
  silenced: boolean;
}

export interface StateStep {
  state: AlertStateName;
  since: Date;
  /** The message owed, if any. */
  notify: AlertMessageKind | null;
}

/**
 * The next state and the message owed after an evaluation whose condition was `met` (null: not judged, which moves
 * nothing). A firing state tells once when it starts; if it was silenced then, it tells at the first evaluation
 * after the silence while still firing. It re-tells after the interval unless `onlyOnce`. A recovery resolves it
 * (told only when asked and its firing was told); the next met evaluation fires again: re-armed.
 */
export function nextState(current: StateNow | null, met: boolean | null, rules: NotifyRules, now: Date): StateStep {
  const from: StateNow = current ?? { state: "ok", since: now, lastNotifiedAt: null };
  if (met === null) return { state: from.state, since: from.since, notify: null };
  const toldSince = (at: Date) => from.lastNotifiedAt !== null && from.lastNotifiedAt.getTime() >= at.getTime();
  if (met) {
    if (from.state !== "firing") return { state: "firing", since: now, notify: rules.silenced ? null : "firing" };
    if (rules.silenced) return { ...from, notify: null };
    if (!toldSince(from.since)) return { ...from, notify: "firing" };
    const due = !rules.onlyOnce && rules.renotifyMinutes !== null && now.getTime() - from.lastNotifiedAt!.getTime() >= rules.renotifyMinutes * 60_000;
    return { ...from, notify: due ? "renotify" : null };
  }
  if (from.state === "firing") {
    const tell = rules.notifyOnResolved && !rules.silenced && toldSince(from.since);
    return { state: "resolved", since: now, notify: tell ? "resolved" : null };
  }
  return { state: from.state, since: from.since, notify: null };
}

/** What one evaluation measured for one scope and dimension value. */
export interface Measured {
  value: number | null;
  previousValue: number | null;
  change: number | null;
  threshold: number | null;
  thresholdHigh: number | null;
  outcome: EvaluationOutcome;
  source: "rollup" | "base" | null;
  rollup: string | null;
  error: string | null;
}

export interface RecordInput {
  orgId: string;
  alertId: string;
  rules: NotifyRules;
  trigger: "cron" | "data_change" | "test";
  /** The occurrence evaluated (a cron instant, a data change): with the scope and value it keys the evaluation, so a retry records nothing twice. Null for a test. */
  occurrence: string | null;
  now: Date;
  scopeKey: string;
  /** '' without `per`. */
  dimensionValue: string;
  measured: Measured;
  targets: readonly AlertMessageTarget[];
}

export interface Recorded {
  evaluationId: string;
  from: AlertStateName;
  to: AlertStateName;
  messageId: string | null;
}

const metOf = (outcome: EvaluationOutcome) => (outcome === "met" ? true : outcome === "not_met" ? false : null);

/**
 * Records one evaluation and, unless it is a test, moves the state and writes the message owed, all in `tx` (one
 * transaction): a worker killed before the commit leaves nothing, and a retried occurrence finds its evaluation
 * already recorded and does nothing again (answers null). A test reports the state it would move to and moves none.
 */
export async function recordEvaluation(tx: TenantTx, input: RecordInput): Promise<Recorded | null> {
  const test = input.trigger === "test";
  const occurrenceKey = test || input.occurrence === null ? null : JSON.stringify([input.alertId, input.occurrence, input.scopeKey, input.dimensionValue]);
  const key = { alertId_scopeKey_dimensionValue: { alertId: input.alertId, scopeKey: input.scopeKey, dimensionValue: input.dimensionValue } };
  if (!test) {
    // The row exists before it is locked, so two evaluations of one state queue on it instead of both inserting.
    await tx.widgetAlertState.createMany({
      data: [{ id: newId("was"), orgId: input.orgId, alertId: input.alertId, scopeKey: input.scopeKey, dimensionValue: input.dimensionValue, state: "ok", since: input.now }],
      skipDuplicates: true,
    });
    await tx.$queryRaw`SELECT 1 FROM widget_alert_states WHERE alert_id = ${input.alertId} AND scope_key = ${input.scopeKey} AND dimension_value = ${input.dimensionValue} FOR UPDATE`;
  }
  const row = await tx.widgetAlertState.findUnique({ where: key });
  const current = row ? { state: row.state as AlertStateName, since: row.since, lastNotifiedAt: row.lastNotifiedAt } : null;
  const met = metOf(input.measured.outcome);
  const step = nextState(current, met, input.rules, input.now);

  const evaluationId = newId("wae");
  const m = input.measured;
  const inserted = await tx.widgetAlertEvaluation.createMany({
    data: [
      {
        id: evaluationId,
        orgId: input.orgId,
        alertId: input.alertId,
        occurrenceKey,
        trigger: input.trigger,
        evaluatedAt: input.now,
        scopeKey: input.scopeKey,
        dimensionValue: input.dimensionValue,
        value: m.value,
        previousValue: m.previousValue,
        change: m.change,
        threshold: m.threshold,
        thresholdHigh: m.thresholdHigh,
        outcome: m.outcome,
        met,
        state: step.state,
        source: m.source,
        rollup: m.rollup,
        error: m.error,
      },
    ],
    skipDuplicates: true,
  });
  if (inserted.count === 0) return null;
  const from = current?.state ?? "ok";
  if (test) return { evaluationId, from, to: step.state, messageId: null };

  const notify = step.notify !== null && input.targets.length > 0 ? step.notify : null;
  await tx.widgetAlertState.update({
    where: key,
    data: {
      state: step.state,
      since: step.since,
      ...(m.value !== null ? { lastValue: m.value } : {}),
      lastEvaluatedAt: input.now,
      lastOccurrence: input.occurrence,
      ...(notify ? { lastNotifiedAt: input.now } : {}),
    },
  });
  if (!notify) return { evaluationId, from, to: step.state, messageId: null };
  const messageId = newId("wam");
  await tx.widgetAlertMessage.create({
    data: {
      id: messageId,
      orgId: input.orgId,
      alertId: input.alertId,
      evaluationId,
      dedupeKey: JSON.stringify([input.alertId, input.scopeKey, input.dimensionValue, occurrenceKey ?? evaluationId, notify]),
      kind: notify,
      scopeKey: input.scopeKey,
      dimensionValue: input.dimensionValue,
      targets: input.targets.map((t) => ({ ...t })),
      createdAt: input.now,
    },
  });
  return { evaluationId, from, to: step.state, messageId };
}

/**
 * Claims a message for delivery, once: the delivery step calls it inside the notification fan-out's claim (the same
 * transaction that writes the deliveries), so a redelivered job or a second worker finds it claimed and sends
 * nothing (null).
 */
export async function claimAlertMessage(tx: TenantTx, messageId: string, now: Date): Promise<WidgetAlertMessage | null> {
  const claimed = await tx.widgetAlertMessage.updateMany({ where: { id: messageId, dispatchedAt: null }, data: { dispatchedAt: now } });
  if (claimed.count === 0) return null;
  return tx.widgetAlertMessage.findUnique({ where: { id: messageId } });
}

/** Messages written but not yet claimed (their hand-off was lost to a crash between commit and delivery), oldest first. */
export async function unclaimedAlertMessages(tx: TenantTx, alertIds?: readonly string[]): Promise<string[]> {
  const rows = await tx.widgetAlertMessage.findMany({
    where: { dispatchedAt: null, ...(alertIds ? { alertId: { in: [...alertIds] } } : {}) },
    select: { id: true },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return rows.map((r) => r.id);
}
