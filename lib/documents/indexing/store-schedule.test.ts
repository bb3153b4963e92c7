import { describe, expect, it } from "vitest";
import type { DocumentChunk } from "../extract/chunk";
import { StoreSchedule, UNIT_CHUNKS, type ScheduledBatch, type StoreScheduleOptions } from "./store-schedule";
import type { TsvectorCalculator } from "./tsvector-calculator";

const BATCH = 4 * UNIT_CHUNKS;

function chunks(count: number): DocumentChunk[] {
  return Array.from({ length: count }, (_, ordinal) => ({
    ordinal, text: `chunk ${ordinal}`, wordStart: ordinal * 450, wordEnd: ordinal * 450 + 500, pageStart: null, pageEnd: null, rowStart: null, rowEnd: null,
  }));
}

/** The vector of a text is its ordinal, so a batch's vectors can be checked against its chunks. */
const embedCalls: string[][] = [];
const embed: StoreScheduleOptions["embed"] = async (texts) => {
  embedCalls.push(texts);
  await new Promise((resolve) => setImmediate(resolve));
  return texts.map((t) => [Number(t.split(" ")[1])]);
};

/** A calculator whose answers the test releases one by one, or answers with null (gives up). */
function heldCalculator() {
  const held: { texts: string[]; answer: (tsv: Uint8Array[] | null) => void }[] = [];
  const calculator: TsvectorCalculator = { compute: (texts) => new Promise((answer) => held.push({ texts, answer })) };
  const release = () => {
    const job = held.shift()!;
    job.answer(job.texts.map((t) => new TextEncoder().encode(t)));
    return job.texts;
  };
  return { calculator, held, release };
}

const ordinals = (batch: ScheduledBatch) => batch.chunks.map((c) => c.ordinal);
const supplied = (batch: ScheduledBatch) => batch.tsv.filter((t) => t !== null).length;
const tick = () => new Promise((resolve) => setImmediate(resolve));

async function drain(schedule: StoreSchedule): Promise<ScheduledBatch[]> {
  const batches: ScheduledBatch[] = [];
  for (let batch = await schedule.next(); batch; batch = await schedule.next()) batches.push(batch);
  return batches;
}

function expectEveryChunkOnce(batches: ScheduledBatch[], count: number) {
  expect(batches.flatMap(ordinals).sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i));
  for (const batch of batches) {
    expect(batch.chunks.length).toBeLessThanOrEqual(BATCH);
    expect(batch.vectors.map((v) => v[0])).toEqual(ordinals(batch));
    expect(batch.tsv).toHaveLength(batch.chunks.length);
  }
}

describe("StoreSchedule", () => {
  it("without a calculator takes whole batches in order, every tsvector left to the database", async () => {
    const batches = await drain(new StoreSchedule(chunks(445), { batchChunks: BATCH, embed, calculator: null, signal: new AbortController().signal }));
    expect(batches.map((b) => b.chunks.length)).toEqual([128, 128, 128, 61]);
    expect(batches.map((b) => b.chunks[0].ordinal)).toEqual([0, 128, 256, 384]);
    expect(batches.map(supplied)).toEqual([0, 0, 0, 0]);
    expectEveryChunkOnce(batches, 445);
  });

  it("with a calculator that keeps ahead, supplies every tsvector, the calculator's own for its chunk", async () => {
    const instant: TsvectorCalculator = { compute: async (texts) => texts.map((t) => new TextEncoder().encode(t)) };
    const batches = await drain(new StoreSchedule(chunks(300), { batchChunks: BATCH, embed, calculator: instant, signal: new AbortController().signal }));
    expectEveryChunkOnce(batches, 300);
    for (const batch of batches) {
      expect(batch.tsv.map((t) => new TextDecoder().decode(t!))).toEqual(batch.chunks.map((c) => c.text));
    }
  });

  it("while the calculator works on the front, the store takes one unit from the far end of what is embedded, then the calculator's", async () => {
    const { calculator, held, release } = heldCalculator();
    const schedule = new StoreSchedule(chunks(445), { batchChunks: BATCH, embed, calculator, signal: new AbortController().signal });
    // The first embedding calls (unit 0, then units 1-3) have answered; the calculator holds unit 0.
    const first = await schedule.next();
    expect(held.map((j) => j.texts[0])).toEqual(["chunk 0"]);
    expect(ordinals(first!)[0]).toBe(3 * UNIT_CHUNKS);
    expect(first!.chunks).toHaveLength(UNIT_CHUNKS);
    expect(supplied(first!)).toBe(0);
    // Everything is embedded by now: the next raw unit is the document's last.
    for (let i = 0; i < 6; i++) await tick();
    const second = await schedule.next();
    expect(ordinals(second!)[0]).toBe(416);
    expect(supplied(second!)).toBe(0);

    expect(release()[0]).toBe("chunk 0");
    await tick();
    const third = await schedule.next();
    expect(ordinals(third!)).toEqual(Array.from({ length: UNIT_CHUNKS }, (_, i) => i));
    expect(supplied(third!)).toBe(UNIT_CHUNKS);
    // The calculator skips the unit the store took (the first batch's) and goes on with the next open one.
    expect(held.map((j) => j.texts[0])).toEqual(["chunk 32"]);
  });

  it("a calculator that gives up leaves the rest to the database, in whole batches", async () => {
    const { calculator, held, release } = heldCalculator();
    const schedule = new StoreSchedule(chunks(445), { batchChunks: BATCH, embed, calculator, signal: new AbortController().signal });
    release();
    await tick();
    held.shift()!.answer(null);
    const batches = await drain(schedule);
    expectEveryChunkOnce(batches, 445);
    expect(batches.reduce((n, b) => n + supplied(b), 0)).toBe(UNIT_CHUNKS);
    // After it gave up: no more single-unit batches than the one taken while it still ran.
    expect(batches.filter((b) => b.chunks.length < UNIT_CHUNKS * 2).length).toBeLessThanOrEqual(3);
  });

  it("embeds and calculates at most a few batches beyond what the store has taken", async () => {
    embedCalls.length = 0;
    const { calculator, held, release } = heldCalculator();
    const schedule = new StoreSchedule(chunks(100 * BATCH), { batchChunks: BATCH, embed, calculator, signal: new AbortController().signal });
    for (let i = 0; i < 40; i++) {
      await tick();
      if (held.length > 0) release();
    }
    const embedded = () => embedCalls.reduce((n, texts) => n + texts.length, 0);
    expect(embedded()).toBe(StoreSchedule.AHEAD_BATCHES * BATCH);
    expect(held).toHaveLength(0);
    // Nothing was taken: the calculator stopped at the same edge.
    const batch = await schedule.next();
    expect(batch!.chunks).toHaveLength(BATCH);
    expect(supplied(batch!)).toBe(BATCH);
    for (let i = 0; i < 10; i++) await tick();
    expect(embedded()).toBe((StoreSchedule.AHEAD_BATCHES + 1) * BATCH);
  });

  it("embeds the first unit on its own, so the store can start before a whole batch is embedded", async () => {
    embedCalls.length = 0;
    const instant: TsvectorCalculator = { compute: async (texts) => texts.map((t) => new TextEncoder().encode(t)) };
    const schedule = new StoreSchedule(chunks(445), { batchChunks: BATCH, embed, calculator: instant, signal: new AbortController().signal });
    const first = await schedule.next();
    expect(ordinals(first!)).toEqual(Array.from({ length: UNIT_CHUNKS }, (_, i) => i));
    expect(supplied(first!)).toBe(UNIT_CHUNKS);
    expectEveryChunkOnce([first!, ...(await drain(schedule))], 445);
    expect(embedCalls.map((texts) => texts.length)).toEqual([UNIT_CHUNKS, BATCH - UNIT_CHUNKS, BATCH, BATCH, 445 - 3 * BATCH]);
  });

  it("rejects with the embedding's failure, and with the signal's reason once aborted", async () => {
    const failing = new StoreSchedule(chunks(300), {
      batchChunks: BATCH, calculator: null, signal: new AbortController().signal,
      embed: async (texts) => (texts[0] === "chunk 0" ? texts.map(() => [0]) : Promise.reject(new Error("provider down"))),
    });
    await expect(drain(failing)).rejects.toThrow("provider down");

    const controller = new AbortController();
    const { calculator } = heldCalculator();
    const waiting = new StoreSchedule(chunks(UNIT_CHUNKS), { batchChunks: BATCH, embed, calculator, signal: controller.signal });
    const next = waiting.next();
    controller.abort(new Error("the run timed out"));
    await expect(next).rejects.toThrow("the run timed out");
  });
});
