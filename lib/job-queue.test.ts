import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUEUES, closeQueue, deliveryLeaseSeconds, getQueue, queueWith, type QueueDefinition } from "@/lib/job-queue";

process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ in_process_worker: false, delivery_lease_seconds: 90 });

// Opening the queue runs pg-boss's migrations: a hook's time, not a test's.
beforeAll(async () => {
  await getQueue(false);
});

afterAll(async () => {
  await closeQueue();
});

describe("queue definitions", () => {
  it("creates the notification pipeline's queues when the queue opens, deliveries with the configured lease", async () => {
    const boss = await getQueue(false);
    expect(deliveryLeaseSeconds()).toBe(90);
    for (const name of Object.values(QUEUES)) expect(await boss.getQueue(name)).not.toBeNull();
    expect(await boss.getQueue(QUEUES.deliver)).toMatchObject({ retryLimit: 5, retryDelay: 0, expireInSeconds: 90 });
    expect(await boss.getQueue(QUEUES.tick)).toMatchObject({ policy: "singleton", retryLimit: 0 });
  });

  it("creates a domain's queue with its options, once, however many callers ask at the same moment", async () => {
    const definition: QueueDefinition = { name: "test.stately", policy: "stately", retryLimit: 2, retryDelay: 7, retryBackoff: true, expireInSeconds: 45 };
    const bosses = await Promise.all(Array.from({ length: 5 }, () => queueWith(definition)));
    expect(new Set(bosses).size).toBe(1);
    expect(await bosses[0].getQueue(definition.name)).toMatchObject({ policy: "stately", retryLimit: 2, retryDelay: 7, retryBackoff: true, expireInSeconds: 45 });
    const id = await bosses[0].send(definition.name, { n: 1 });
    expect(id).not.toBeNull();
  });

  // The documents' two queues, created at once, deadlocked on PostgreSQL (each attaches a partition to pg-boss's job table).
  it("creates several queues asked for at the same moment, by one domain and by several", async () => {
    const definitions: QueueDefinition[] = Array.from({ length: 4 }, (_, i) => ({ name: `test.together.${i}`, retryLimit: i }));
    const bosses = await Promise.all([queueWith(definitions[0], definitions[1]), queueWith(definitions[2]), queueWith(definitions[3], definitions[0])]);
    for (const [i, definition] of definitions.entries()) expect(await bosses[0].getQueue(definition.name)).toMatchObject({ retryLimit: i });
  });

  it("takes a queue another process already created as it stands", async () => {
    const boss = await getQueue(false);
    await boss.createQueue("test.elsewhere", { name: "test.elsewhere", retryLimit: 1, expireInSeconds: 30 });
    await queueWith({ name: "test.elsewhere", retryLimit: 9, expireInSeconds: 600 });
    expect(await boss.getQueue("test.elsewhere")).toMatchObject({ retryLimit: 1, expireInSeconds: 30 });
  });

  it("forgets a failed creation, so the next call tries again", async () => {
    // @ts-expect-error a policy pg-boss does not know: its createQueue refuses it
    await expect(queueWith({ name: "test.retried", policy: "no-such-policy" })).rejects.toThrow(/policy/);
    const boss = await queueWith({ name: "test.retried", policy: "standard" });
    expect(await boss.getQueue("test.retried")).toMatchObject({ policy: "standard" });
  });
});
