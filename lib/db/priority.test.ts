import { describe, expect, it, vi } from "vitest";
import { measurePace, paced } from "@/test/machine-pace";
import { FairQueue } from "@/lib/query/fair-queue";
import { asInteractive, backgroundPacer, byPriority, databaseActivity } from "./priority";

/** A piece of work that ends when told to, recording when it started. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { work: () => (log.push(name), done), open };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Waits for the background side to be asleep: an event of this module's own state, polled under a bound derived from the machine. */
const yielding = (n: number, pace: number) => vi.waitFor(() => expect(databaseActivity().yielding).toBe(n), { timeout: paced(5_000, pace), interval: 5 });

describe("byPriority", () => {
  it("lets an interactive statement that waits for a slot go before a background one that came later, and keeps an idle slot work-conserving", async () => {
    const pace = measurePace();
    const queue = new FairQueue({ total: 1, perKey: 1, deadlineMs: 600_000 });
    const enter = <T>(work: () => Promise<T>) => queue.run("org", work);
    const log: string[] = [];
    const [a, b, c] = [gate(log, "interactive a"), gate(log, "interactive b"), gate(log, "background c")];
    const runs = [byPriority(enter, a.work), byPriority(enter, b.work)];
    await tick();
    expect(databaseActivity()).toMatchObject({ interactive: 2, waiting: 1 });
    const pacer = backgroundPacer({ leastShare: 0 });
    runs.push(pacer.run(() => byPriority(enter, c.work)));
    await yielding(1, pace);
    expect(log).toEqual(["interactive a"]);
    a.open();
    // b waited for the slot: it gets it, and c enters the queue only then (nobody waits any more).
    await vi.waitFor(() => expect(log).toEqual(["interactive a", "interactive b"]), { timeout: paced(5_000, pace), interval: 5 });
    await yielding(0, pace);
    expect(queue.snapshot().lines.org).toEqual({ running: 1, waiting: 1 });
    b.open();
    c.open();
    await Promise.all(runs);
    expect(log).toEqual(["interactive a", "interactive b", "background c"]);
    expect(databaseActivity()).toMatchObject({ interactive: 0, waiting: 0, yielding: 0 });

    // Nothing interactive waits: a background statement takes a free slot at once, beside running interactive work.
    const wide = new FairQueue({ total: 2, perKey: 2, deadlineMs: 600_000 });
    const running = gate(log, "interactive d");
    const d = byPriority((w) => wide.run("org", w), running.work);
    await tick();
    await pacer.run(() => byPriority((w) => wide.run("org", w), async () => log.push("background e")));
    expect(log.slice(-2)).toEqual(["interactive d", "background e"]);
    running.open();
    await d;
  });
});

describe("asInteractive", () => {
  it("counts work (each tenant transaction runs in it) as interactive, except what a pacer runs as background work", async () => {
    const log: string[] = [];
    const viewer = gate(log, "viewer");
    const running = asInteractive(viewer.work);
    expect(databaseActivity()).toMatchObject({ interactive: 1, waiting: 0 });
    const seen = await backgroundPacer().run(() => asInteractive(async () => databaseActivity().interactive));
    expect(seen).toBe(1);
    viewer.open();
    await running;
    expect(databaseActivity().interactive).toBe(0);
  });
});

describe("backgroundPacer", () => {
  it("waits while interactive work runs and for the quiet period after it, and not at all on a quiet engine", async () => {
    const pace = measurePace();
    const queue = new FairQueue({ total: 2, perKey: 2, deadlineMs: 600_000 });
    const log: string[] = [];
    const pacer = backgroundPacer({ quietMs: 0, leastShare: 0 });
    // Quiet: no wait.
    await pacer.pace();
    expect(databaseActivity().yielding).toBe(0);

    const viewer = gate(log, "viewer");
    const request = byPriority((w) => queue.run("org", w), viewer.work);
    let wentOn = false;
    const piece = pacer.pace().then(() => (wentOn = true));
    await yielding(1, pace);
    // However many turns the event loop takes, the worker does not go on while the viewer's statement runs.
    for (let i = 0; i < 20; i++) await tick();
    expect(wentOn).toBe(false);
    viewer.open();
    await request;
    await piece;
    expect(wentOn).toBe(true);
  });

  it("keeps its least share under constant interactive work: it goes on while a viewer's statement still runs", async () => {
    const queue = new FairQueue({ total: 2, perKey: 2, deadlineMs: 600_000 });
    const log: string[] = [];
    const viewer = gate(log, "viewer");
    const request = byPriority((w) => queue.run("org", w), viewer.work);
    const pacer = backgroundPacer({ quietMs: 1, leastShare: 0.5 });
    for (let i = 0; i < 3; i++) await pacer.pace();
    expect(databaseActivity()).toMatchObject({ interactive: 1, yielding: 0 });
    viewer.open();
    await request;
  });

  it("refuses a share that is not one", () => {
    expect(() => backgroundPacer({ leastShare: 1.5 })).toThrow(RangeError);
    expect(() => backgroundPacer({ leastShare: Number.NaN })).toThrow(RangeError);
  });
});
