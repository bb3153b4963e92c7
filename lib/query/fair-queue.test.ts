import { describe, expect, it, vi } from "vitest";
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
