import { describe, expect, it } from "vitest";
import { requestedLimitMs } from "./embedded-engine";

// The embedded engine cannot run statement_timeout itself; its supervisor reads the limit from the statements that set it.
describe("the time limit a statement sets", () => {
  it("reads withTenant's quarry_enter_tenant call (fourth argument, migration 0017)", () => {
    const text = "SELECT quarry_enter_tenant($1, $2, $3, $4::integer, $5::text)::text AS entered";
    expect(requestedLimitMs(text, ["org_acme", "", "quarry_reader", 1500, "UTC"])).toBe(1500);
    // No limit asked: 0, the engine's default applies.
    expect(requestedLimitMs(text, ["org_acme", "", "quarry_app", null, null])).toBe(0);
  });

  it("reads set_config and SET forms, and nothing else", () => {
    expect(requestedLimitMs("SELECT set_config('statement_timeout', $1, true)", ["2500"])).toBe(2500);
    expect(requestedLimitMs("SET LOCAL statement_timeout = '3s'", [])).toBe(3000);
    expect(requestedLimitMs("SELECT 1", [])).toBeUndefined();
  });
});

describe("closing the engine while it restarts", () => {
  it.skipIf(process.env.QUARRY_TEST_ENGINE === "postgres")("starts no new engine process after the close", async () => {
    const { closeDb, getDb } = await import("./client");
    const db = await getDb();
    const engine = db.engine!;
    const restarting = engine.restart("test: closed while restarting");
    await closeDb();
    await restarting;
    // A start after the close would set the state back to ready (and leave a process behind).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(engine.state).toBe("closed");
  });
});
