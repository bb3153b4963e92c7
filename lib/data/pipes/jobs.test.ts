import { describe, expect, it } from "vitest";
import { withTenant } from "@/lib/db/tenant";
import { INGEST_KEY_TTL_MS, tickPulls } from "./jobs";

describe("the pull tick's upkeep", () => {
  it("forgets ingest Idempotency-Keys past their time, in every organization, and keeps younger ones", async () => {
    const now = new Date();
    const at = (msAgo: number) => new Date(now.getTime() - msAgo);
    for (const orgId of ["org_acme", "org_globex"]) {
      await withTenant({ orgId }, async (tx) => {
        for (const [key, created] of [["old", at(INGEST_KEY_TTL_MS + 60_000)], ["young", at(INGEST_KEY_TTL_MS - 60_000)]] as const) {
          await tx.$executeRaw`INSERT INTO data_ingest_batches (org_id, idempotency_key, table_name, body_sha256, result, created_by, created_at)
                               VALUES (${orgId}, ${`upkeep-${key}`}, 'spend', 'sha', '{}'::jsonb, 'usr_test', ${created})`;
        }
      });
    }
    // No pull is scheduled: the queue is never sent to.
    const tick = await tickPulls({ send: async () => null } as never, now);
    expect(tick.expiredKeys).toBe(2);
    for (const orgId of ["org_acme", "org_globex"]) {
      const keys = await withTenant({ orgId }, (tx) => tx.$queryRaw<{ k: string }[]>`SELECT idempotency_key AS k FROM data_ingest_batches WHERE idempotency_key LIKE 'upkeep-%'`);
      expect(keys.map((r) => r.k)).toEqual(["upkeep-young"]);
    }
    expect((await tickPulls({ send: async () => null } as never, now)).expiredKeys).toBe(0);
  });
});
