/** Where "now" comes from; tests pass a clock they move by hand instead of sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to (tests, replays). */
export function manualClock(start: Date) {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    set: (to: Date) => void (current = to.getTime()),
    advance: (ms: number) => void (current += ms),
  };
}
