import { describe, expect, it, vi } from "vitest";
import { measurePace, paced } from "@/test/machine-pace";
import { FairQueue, QueueDeadline } from "./fair-queue";

/** A piece of work that ends when told to, recording when it started. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { work: () => (log.push(name), done), open };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("FairQueue", () => {
  it("runs at most perKey of one organization and total overall", async () => {
    const queue = new FairQueue({ total: 3, perKey: 2, deadlineMs: 60_000 });
    const log: string[] = [];
    const gates = Array.from({ length: 5 }, (_, i) => gate(log, `a${i}`));
    const runs = gates.map((g) => queue.run("a", g.work));
    await tick();
    expect(log).toEqual(["a0", "a1"]);
    expect(queue.snapshot()).toEqual({ running: 2, lines: { a: { running: 2, waiting: 3 } } });
    gates[0].open();
    await tick();
    expect(log).toEqual(["a0", "a1", "a2"]);
    for (const g of gates) g.open();
    await Promise.all(runs);
    expect(queue.snapshot()).toEqual({ running: 0, lines: {} });
  });

  it("lets one organization alone use every idle slot", async () => {
    const queue = new FairQueue({ total: 3, perKey: 3, deadlineMs: 60_000 });
    const log: string[] = [];
    const gates = Array.from({ length: 5 }, (_, i) => gate(log, `a${i}`));
    const runs = gates.map((g) => queue.run("a", g.work));
    await tick();
    expect(log).toEqual(["a0", "a1", "a2"]);
    expect(queue.snapshot()).toEqual({ running: 3, lines: { a: { running: 3, waiting: 2 } } });
    gates[1].open();
    await tick();
    expect(log).toEqual(["a0", "a1", "a2", "a3"]);
    for (const g of gates) g.open();
    await Promise.all(runs);
    expect(queue.snapshot()).toEqual({ running: 0, lines: {} });
  });

  it("gives an organization that arrives while another holds every slot the next slot to free, then equal shares", async () => {
    const queue = new FairQueue({ total: 3, perKey: 3, deadlineMs: 60_000 });
    const log: string[] = [];
    const a = Array.from({ length: 6 }, (_, i) => gate(log, `a${i}`));
    const b = Array.from({ length: 3 }, (_, i) => gate(log, `b${i}`));
    const runs = a.map((g) => queue.run("a", g.work));
    await tick();
    runs.push(...b.map((g) => queue.run("b", g.work)));
    await tick();
    expect(log).toEqual(["a0", "a1", "a2"]);
    expect(queue.snapshot().lines).toEqual({ a: { running: 3, waiting: 3 }, b: { running: 0, waiting: 3 } });
    // a3, a4, a5 were queued first, but b runs nothing: the freed slot is b's.
    a[0].open();
    await tick();
    expect(log).toEqual(["a0", "a1", "a2", "b0"]);
    // Equal shares now (a 1 running, b 1): in turn, and a was served longer ago.
    a[1].open();
    await tick();
    expect(log).toEqual(["a0", "a1", "a2", "b0", "a3"]);
    a[2].open();
    await tick();
    expect(log).toEqual(["a0", "a1", "a2", "b0", "a3", "b1"]);
    b[0].open();
    await tick();
    expect(log).toEqual(["a0", "a1", "a2", "b0", "a3", "b1", "a4"]);
    expect(queue.snapshot().lines).toEqual({ a: { running: 2, waiting: 1 }, b: { running: 1, waiting: 1 } });
    for (const g of [...a, ...b]) g.open();
    await Promise.all(runs);
    expect(log.slice(7).sort()).toEqual(["a5", "b2"]);
    expect(queue.snapshot()).toEqual({ running: 0, lines: {} });
  });

  it("tells a caller of until when the state it waits for comes (a caller queued, a slot freed), and not before", async () => {
    const queue = new FairQueue({ total: 1, perKey: 1, deadlineMs: 60_000 });
    const log: string[] = [];
    const [first, second] = [gate(log, "a0"), gate(log, "b0")];
    let queued = false;
    const waitingForB = queue.until((s) => s.lines.b?.waiting === 1).then(() => (queued = true));
    const runs = [queue.run("a", first.work)];
    await tick();
    expect(queued).toBe(false);
    runs.push(queue.run("b", second.work));
    await waitingForB;
    expect(queue.snapshot()).toEqual({ running: 1, lines: { a: { running: 1, waiting: 0 }, b: { running: 0, waiting: 1 } } });
    // Already true: resolves at once.
    await queue.until((s) => s.running === 1);
    const bRuns = queue.until((s) => s.lines.b?.running === 1);
    first.open();
    await bRuns;
    // The slot is b's as soon as a's frees; its work starts once its run resumes.
    expect(queue.snapshot().lines).toEqual({ b: { running: 1, waiting: 0 } });
    await tick();
    expect(log).toEqual(["a0", "b0"]);
    second.open();
    await Promise.all(runs);
    await queue.until((s) => s.running === 0 && Object.keys(s.lines).length === 0);
  });

  it("serves the organization with the fewest running first, whatever the order they queued in", async () => {
    const queue = new FairQueue({ total: 2, perKey: 2, deadlineMs: 60_000 });
    const log: string[] = [];
    const a = Array.from({ length: 3 }, (_, i) => gate(log, `a${i}`));
    const c = gate(log, "c0");
    const runs = [queue.run("a", a[0].work), queue.run("c", c.work), queue.run("a", a[1].work), queue.run("a", a[2].work)];
    const b = gate(log, "b0");
    runs.push(queue.run("b", b.work));
    await tick();
    expect(log).toEqual(["a0", "c0"]);
    // c frees its slot: a (1 running, queued first) and b (0 running) wait; b has fewer.
    c.open();
    await tick();
    expect(log).toEqual(["a0", "c0", "b0"]);
    for (const g of [...a, b]) g.open();
    await Promise.all(runs);
    expect(log).toEqual(["a0", "c0", "b0", "a1", "a2"]);
  });

  it("with longMs, gives an organization it knows nothing of lately one slot, and every slot once its work ended short", async () => {
    const queue = new FairQueue({ total: 3, perKey: 3, deadlineMs: 60_000, longMs: 60_000 });
    const log: string[] = [];
    const first = Array.from({ length: 3 }, (_, i) => gate(log, `a${i}`));
    const runs = first.map((g) => queue.run("a", g.work));
    await tick();
    expect(log).toEqual(["a0"]);
    // The slots left free are other organizations' at once.
    await queue.run("b", async () => log.push("b0"));
    first[0].open();
    await tick();
    // a0 ended short: a's next ones take every idle slot.
    expect(log).toEqual(["a0", "b0", "a1", "a2"]);
    for (const g of first) g.open();
    await Promise.all(runs);
    const trusted = Array.from({ length: 3 }, (_, i) => gate(log, `a${i + 3}`));
    const trustedRuns = trusted.map((g) => queue.run("a", g.work));
    await tick();
    expect(log).toEqual(["a0", "b0", "a1", "a2", "a3", "a4", "a5"]);
    for (const g of trusted) g.open();
    await Promise.all(trustedRuns);
  });

  it("holds an organization whose work ran long to one slot for as long again, then trusts it again after short work", async () => {
    // Work that only awaits a timer or nothing ends well under this, however busy the machine.
    const longMs = paced(100, measurePace());
    const queue = new FairQueue({ total: 3, perKey: 3, deadlineMs: 60_000, longMs });
    const log: string[] = [];
    const began = performance.now();
    await queue.run("a", () => new Promise((resolve) => setTimeout(resolve, 2 * longMs)));
    const held = [gate(log, "a0"), gate(log, "a1")];
    const runs = held.map((g) => queue.run("a", g.work));
    await tick();
    expect(log).toEqual(["a0"]);
    // Another organization still finds the idle slots.
    await queue.run("b", async () => log.push("b0"));
    expect(log).toEqual(["a0", "b0"]);
    for (const g of held) g.open();
    await Promise.all(runs);
    expect(log).toEqual(["a0", "b0", "a1"]);
    // Each piece of a's work ran at most `ended - began` and ended by `ended`: so did any hold it started.
    const ended = performance.now();
    await new Promise((resolve) => setTimeout(resolve, ended - began + 1));
    await queue.run("a", async () => log.push("short"));
    const lent = Array.from({ length: 3 }, (_, i) => gate(log, `a${i + 2}`));
    const lentRuns = lent.map((g) => queue.run("a", g.work));
    await tick();
    expect(log).toEqual(["a0", "b0", "a1", "short", "a2", "a3", "a4"]);
    for (const g of lent) g.open();
    await Promise.all(lentRuns);
    expect(queue.snapshot()).toEqual({ running: 0, lines: {} });
  });

  it("gives another organization a slot at once while one organization's line is long", async () => {
    const queue = new FairQueue({ total: 3, perKey: 2, deadlineMs: 60_000 });
    const log: string[] = [];
    const busy = Array.from({ length: 16 }, (_, i) => gate(log, `a${i}`));
    const runs = busy.map((g) => queue.run("a", g.work));
    const other = gate(log, "b0");
    const b = queue.run("b", other.work);
    await tick();
    expect(log).toEqual(["a0", "a1", "b0"]);
    other.open();
    await b;
    for (const g of busy) g.open();
    await Promise.all(runs);
  });

  it("serves waiting organizations in turn when slots free up", async () => {
    const queue = new FairQueue({ total: 1, perKey: 1, deadlineMs: 60_000 });
    const log: string[] = [];
    const first = gate(log, "a0");
    const all = [queue.run("a", first.work)];
    const later = [gate(log, "a1"), gate(log, "a2"), gate(log, "b0"), gate(log, "c0"), gate(log, "b1")];
    const keys = ["a", "a", "b", "c", "b"];
    later.forEach((g, i) => all.push(queue.run(keys[i], g.work)));
    for (const g of later) g.open();
    first.open();
    await Promise.all(all);
    // a had its turn; then b, c and a alternate instead of a's line going first.
    expect(log).toEqual(["a0", "b0", "c0", "a1", "b1", "a2"]);
  });

  it("turns a caller away after the deadline, and the slot it never got is not lost", async () => {
    const queue = new FairQueue({ total: 1, perKey: 1, deadlineMs: 30 });
    const log: string[] = [];
    const holder = gate(log, "a0");
    const held = queue.run("a", holder.work);
    await expect(queue.run("b", async () => log.push("b0"))).rejects.toBeInstanceOf(QueueDeadline);
    holder.open();
    await held;
    await queue.run("b", async () => log.push("b1"));
    expect(log).toEqual(["a0", "b1"]);
    expect(queue.snapshot()).toEqual({ running: 0, lines: {} });
  });

  it("releases the slot when the work fails", async () => {
    const queue = new FairQueue({ total: 1, perKey: 1, deadlineMs: 1_000 });
    await expect(queue.run("a", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(queue.run("a", async () => "ran")).resolves.toBe("ran");
  });
});

describe("QueueDeadline", () => {
  it("is recognised by every copy of the module, as Next.js bundles it more than once", async () => {
    vi.resetModules();
    const other = await import("./fair-queue");
    expect(other.QueueDeadline).not.toBe(QueueDeadline);
    expect(new other.QueueDeadline(5)).toBeInstanceOf(QueueDeadline);
    expect(new QueueDeadline(5)).toBeInstanceOf(other.QueueDeadline);
    expect(new Error("waited 5 ms for a slot")).not.toBeInstanceOf(QueueDeadline);
    expect(null).not.toBeInstanceOf(QueueDeadline);
  });
});
