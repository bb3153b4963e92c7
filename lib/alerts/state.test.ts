import { describe, expect, it } from "vitest";
import { nextState, type NotifyRules, type StateNow } from "./state";

const rules: NotifyRules = { notifyOnResolved: true, renotifyMinutes: 60, onlyOnce: false, silenced: false };
const t = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 0, minutes));
/** Runs `outcomes` (met, not met, not judged) one minute apart from no state, answering each step's state and message. */
function walk(outcomes: (boolean | null)[], overrides: Partial<NotifyRules> = {}, spacing = 1) {
  let current: StateNow | null = null;
  return outcomes.map((met, i) => {
    const now = t(i * spacing);
    const step = nextState(current, met, { ...rules, ...overrides }, now);
    current = { state: step.state, since: step.since, lastNotifiedAt: step.notify ? now : (current?.lastNotifiedAt ?? null) };
    return `${step.state}${step.notify ? `:${step.notify}` : ""}`;
  });
}

describe("nextState", () => {
  it("fires once, resolves once, and re-arms; a not-judged evaluation moves nothing", () => {
    expect(walk([false, true, true, null, false, false, true])).toEqual(["ok", "firing:firing", "firing", "firing", "resolved:resolved", "resolved", "firing:firing"]);
  });

  it("re-notifies only after the interval, never when only once, and resolves silently unless asked", () => {
    expect(walk([true, true, true, true], {}, 40)).toEqual(["firing:firing", "firing", "firing:renotify", "firing"]);
    expect(walk([true, true, true, true], { onlyOnce: true }, 40)).toEqual(["firing:firing", "firing", "firing", "firing"]);
    expect(walk([true, false], { notifyOnResolved: false })).toEqual(["firing:firing", "resolved"]);
  });

  it("silenced: moves without telling, tells a firing that outlived the silence, and does not report a resolution nobody heard fire", () => {
    let current: StateNow | null = null;
    const silent = nextState(current, true, { ...rules, silenced: true }, t(0));
    expect(silent).toEqual({ state: "firing", since: t(0), notify: null });
    current = { state: silent.state, since: silent.since, lastNotifiedAt: null };
    expect(nextState(current, true, rules, t(5)).notify).toBe("firing");
    expect(nextState(current, false, rules, t(5))).toEqual({ state: "resolved", since: t(5), notify: null });
  });
});
