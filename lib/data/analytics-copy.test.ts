import "@/test/embedded-analytics";
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { asJsonRows } from "@/lib/query/compile";
import { runReadOnly } from "@/lib/query/execute";
import { openRowSource } from "./formats";
import type { RowSource } from "./formats/types";
import { sourceLimits } from "./limits";
import { type LoadRequest, loadTable } from "./load";

/* Embedded: user SQL runs on analytics copies of the primary (docs/embedded-engine.md); they must carry an organization's tables and follow its loads. */

const acme = { orgId: "org_acme" };
const rows = (values: string[]): RowSource => ({ header: ["n"], rows: (async function* () { for (const v of values) yield [v]; })() });
const request = (table: string, mode: LoadRequest["mode"]): LoadRequest => ({ table, mode, onBadRow: "fail", columns: [{ name: "n", type: "integer", from: 0 }] });
const total = async (table: string) => Number((await runReadOnly(acme, asJsonRows(`SELECT coalesce(sum(n), 0)::int AS total FROM ${table}`), [], { timeZone: "UTC" }))[0].total);

async function until(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not true within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("an organization's tables on the reader's engine", () => {
  it("are read as loaded, and a load is seen by the next statement", async () => {
    const table = `copied_${randomBytes(4).toString("hex")}`;
    await loadTable(acme, request(table, "create"), rows(["1", "2"]));
    expect(await total(table)).toBe(3);
    await loadTable(acme, request(table, "replace"), rows(["10"]));
    expect(await total(table)).toBe(10);
    await loadTable(acme, request(table, "append"), rows(["5"]));
    expect(await total(table)).toBe(15);
    const db = await getDb();
    if (db.kind === "pglite") expect(db.analytics?.running).toBeGreaterThan(0);
  }, 300_000);

  it.skipIf(process.env.QUARRY_TEST_ENGINE === "postgres")("follow a load of rows by copying the changed table alone (no engine restart), and catch up before any reader asks", async () => {
    const { analytics } = await getDb();
    const table = `fresh_${randomBytes(4).toString("hex")}`;
    // A new table is a definition: the copy is taken whole, and at once, with no reader waiting for it.
    const csv = ["n", ...Array.from({ length: 1000 }, (_, i) => String(i + 1))].join("\n");
    await loadTable(acme, request(table, "create"), await openRowSource(Readable.from([Buffer.from(csv)]), { format: "csv", limits: sourceLimits() }));
    // No reader asks meanwhile: the copy catches up on its own (a generous bound: a whole copy takes seconds, minutes on a busy machine).
    await until(() => analytics?.behind === 0, 300_000);
    const restarts = analytics!.current!.restarts;
    expect(await total(table)).toBe(500_500);
    // Rows only: the changed table is copied, the engine keeps running (a whole copy restarts it on the new folder).
    await loadTable(acme, request(table, "append"), rows(["7"]));
    await loadTable(acme, request(table, "append"), rows(["3"]));
    expect(await total(table)).toBe(500_510);
    await loadTable(acme, request(table, "replace"), rows(["4"]));
    expect(await total(table)).toBe(4);
    expect(analytics!.current!.restarts).toBe(restarts);
  }, 300_000);

  it.skipIf(process.env.QUARRY_TEST_ENGINE === "postgres")("never show a reader half a load: each answer during replaces and appends is a whole state of the table", async () => {
    const table = `whole_${randomBytes(4).toString("hex")}`;
    const ones = (count: number) => Array.from({ length: count }, () => "1");
    await loadTable(acme, request(table, "create"), rows(ones(3000)));
    expect(await total(table)).toBe(3000);
    const seen = new Set<number>();
    let loading = true;
    const reading = (async () => {
      while (loading) seen.add(await total(table));
    })();
    await loadTable(acme, request(table, "replace"), rows(ones(5000)));
    await loadTable(acme, request(table, "append"), rows(ones(2000)));
    loading = false;
    await reading;
    seen.add(await total(table));
    // Only whole states: before, after the replace, after the append.
    expect([...seen].filter((n) => ![3000, 5000, 7000].includes(n))).toEqual([]);
    expect(seen.has(7000)).toBe(true);
  }, 300_000);
});
