import { describe, expect, it } from "vitest";
import * as ready from "@/app/api/ready/route";
import { call } from "@/test/helpers";
import { getDb } from "./client";
import { markStarted } from "./health";
import { listMigrations } from "./migrate";

describe("GET /api/ready", () => {
  it("answers 503 until start-up work is done, then 200 with the applied migrations", async () => {
    const starting = await call(ready.GET, "GET", "/api/ready");
    expect(starting.status).toBe(503);
    expect(starting.json.detail).toMatch(/starting/);
    markStarted();
    const res = await call(ready.GET, "GET", "/api/ready");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: "ready", migrations: listMigrations().length });
  });

  it("answers 503 naming the missing migration when the database is behind this build", async () => {
    markStarted();
    const { system } = await getDb();
    const [last] = listMigrations().slice(-1);
    await system.query("DELETE FROM _quarry_migrations WHERE name = $1", [last.name]);
    const res = await call(ready.GET, "GET", "/api/ready");
    expect(res.status).toBe(503);
    expect(res.json.detail).toContain(`npm run db:migrate (missing ${last.name})`);
  });
});
