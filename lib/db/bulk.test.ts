import { describe, expect, it } from "vitest";
import { Unavailable } from "@/lib/errors";
import { withTenantBulk } from "./bulk";
import { getDb } from "./client";

describe("a bulk tenant transaction (document search, indexing) that cannot get a connection in time", () => {
  it("answers busy with Retry-After (503) instead of waiting for ever, and gives the late connection back", async () => {
    const db = await getDb();
    const max = (db.pool.options as { max?: number }).max ?? 10;
    const held = await Promise.all(Array.from({ length: max }, () => db.pool.connect()));
    let error: unknown;
    try {
      error = await withTenantBulk({ orgId: "org_acme" }, async () => undefined, (tx) => tx.query("SELECT 1 AS one"), { connectionWaitMs: 200 }).catch((e: unknown) => e);
    } finally {
      for (const client of held) client.release();
    }
    expect(error).toBeInstanceOf(Unavailable);
    expect((error as Unavailable).retryAfterSeconds).toBe(5);
    // The connection the refused caller was queued for went back to the pool: the next caller gets one.
    const rows = await withTenantBulk({ orgId: "org_acme" }, async () => undefined, (tx) => tx.query<{ one: number }>("SELECT 1 AS one"), { connectionWaitMs: 5_000 });
    expect(rows).toEqual([{ one: 1 }]);
    expect(db.pool.waitingCount).toBe(0);
  });
});
