import { describe, expect, it, onTestFinished } from "vitest";
import { configSingleton } from "@/lib/config";
import { QueryError } from "./errors";
import { BatchTransactionSpent, type StatementRunner, explainReadOnly, runReadOnlyBatch, userSqlQueue } from "./execute";

const scope = { orgId: "org_acme", locationIds: ["loc_acme_nyc"] };
const started = "SELECT row_to_json(q.*) AS row FROM (SELECT transaction_timestamp()::text AS tx, count(DISTINCT location_id)::int AS locations FROM orders) q";
// Passes the allow-list and fails in the database, aborting the transaction it runs in.
const broken = "SELECT row_to_json(q.*) AS row FROM (SELECT 1 / (count(*) - count(*)) AS n FROM orders) q";

type Outcome = { tx?: string; locations?: number; error?: string };

/** Runs items through one batch; each item is a list of statements run in turn, the first failure caught as an `sql` widget's retry does. */
async function batch(items: string[][]): Promise<Outcome[]> {
  const outcomes: Outcome[] = items.map(() => ({}));
  await runReadOnlyBatch(scope, items.map((statements, index) => ({ statements, index })), { timeZone: "UTC", transactionTimeoutMs: 30_000 }, async ({ statements, index }, run: StatementRunner) => {
    for (const text of statements) {
      try {
        const [row] = await run(text, []);
        outcomes[index] = row as Outcome;
      } catch (error) {
        if (error instanceof BatchTransactionSpent || !(error instanceof QueryError)) throw error;
        outcomes[index] = { error: error.message };
      }
    }
  });
  return outcomes;
}

describe("a batch of read-only statements in one tenant transaction", () => {
  it("runs every item in the same transaction, under the tenant's location scope", async () => {
    const outcomes = await batch([[started], [started], [started]]);
    expect(outcomes.map((o) => o.locations)).toEqual([1, 1, 1]);
    expect(new Set(outcomes.map((o) => o.tx)).size).toBe(1);
  });

  it("a failed statement is that item's error; the items after it go on in a new transaction", async () => {
    const outcomes = await batch([[started], [broken], [started], [started]]);
    expect(outcomes[1].error).toMatch(/division by zero/);
    expect(outcomes[2].locations).toBe(1);
    expect(outcomes[2].tx).not.toBe(outcomes[0].tx);
    expect(outcomes[3].tx).toBe(outcomes[2].tx);
  });

  it("an item that runs another statement after its own failed one is run again outside the batch and gets its rows", async () => {
    const outcomes = await batch([[started], [broken, started], [started]]);
    expect(outcomes[1].locations).toBe(1);
    expect(outcomes[1].tx).not.toBe(outcomes[0].tx);
    expect(outcomes[2].locations).toBe(1);
  });

  it("an error an item throws itself ends the batch and reaches the caller", async () => {
    const seen: number[] = [];
    const run = runReadOnlyBatch(scope, [0, 1, 2], { timeZone: "UTC", transactionTimeoutMs: 30_000 }, async (item, runner) => {
      seen.push(item);
      await runner(started, []);
      if (item === 1) throw new Error("over budget");
    });
    await expect(run).rejects.toThrow("over budget");
    expect(seen).toEqual([0, 1]);
  });

  it("applies each statement's own time limit", async () => {
    const outcomes: string[] = [];
    const long = "SELECT row_to_json(q.*) AS row FROM (SELECT count(*) AS n FROM generate_series(1, 400000000)) q";
    const short = "SELECT row_to_json(q.*) AS row FROM (SELECT 1 AS n) q";
    await runReadOnlyBatch(scope, [{ limitMs: 10_000, text: short }, { limitMs: 200, text: long }], { timeZone: "UTC", transactionTimeoutMs: 30_000 }, async ({ limitMs, text }, runner) => {
      try {
        await runner(text, [], limitMs);
        outcomes.push("ran");
      } catch (error) {
        outcomes.push((error as QueryError).message);
      }
    });
    expect(outcomes).toEqual(["ran", "The query ran longer than its time limit of 200 ms and was cancelled"]);
  });
});

describe("checking a statement with EXPLAIN (a plan of manifests)", () => {
  it("waits in the organization's user-SQL slot like every reader statement", async () => {
    // acme's only slot (capped at one here: the queue lends an organization every idle slot otherwise) is held until
    // the gate opens; its EXPLAIN must wait for it. The slot is held without a connection, so what the EXPLAIN waits
    // for is the slot (on PGlite a held reader transaction would also hold the one connection the EXPLAIN's own
    // catalog read needs).
    process.env.QUARRY_USER_SQL_PER_ORG = "1";
    configSingleton.set(undefined);
    onTestFinished(() => {
      delete process.env.QUARRY_USER_SQL_PER_ORG;
      configSingleton.set(undefined);
    });
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const slots = userSqlQueue();
    const holder = slots.run(scope.orgId, () => gate);
    await slots.until((state) => state.lines[scope.orgId]?.running === 1);
    let explained = false;
    const explain = explainReadOnly(scope, "SELECT 1 FROM orders", [], { timeZone: "UTC" }).then(() => (explained = true));
    // Queued behind the holder, or (were it to skip the slot) done: whichever comes first.
    await Promise.race([slots.until((state) => state.lines[scope.orgId]?.waiting === 1), explain]);
    expect(explained).toBe(false);
    openGate();
    await holder;
    await explain;
    expect(explained).toBe(true);
  });
});

describe("EXPLAIN of a plan", () => {
  it("stops at its own time limit however long the planner would fold constants", async () => {
    const { explainReadOnly } = await import("./execute");
    const fold = (i: number) => `length(power(7::numeric, ${20_000 + i})::text)`;
    // More folded powers each round until planning outlasts the limit: every round that ends before it took less than
    // the limit, so the test's time stays bounded whatever the machine's speed.
    for (let count = 25; count <= 25 * 4 ** 5; count *= 4) {
      const heavy = `SELECT ${Array.from({ length: count }, (_, i) => fold(i)).join(" + ")}`;
      const outcome = await explainReadOnly(scope, heavy, [], { timeZone: "UTC" }).then(
        () => "planned",
        (error: unknown) => error,
      );
      if (outcome === "planned") continue;
      expect(outcome).toMatchObject({ name: "QueryError", code: "timeout" });
      return;
    }
    expect.unreachable("planning never outlasted the EXPLAIN time limit");
  });
});
