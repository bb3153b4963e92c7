import { describe, expect, it } from "vitest";
import { loadConfig } from "./schema";

const server = { DATABASE_URL: "postgres://quarry:quarry@127.0.0.1:5432/quarry" };

describe("user SQL slots", () => {
  it("let one organization use every slot unless QUARRY_USER_SQL_PER_ORG caps it", () => {
    expect(loadConfig(server).userSql).toEqual({ total: 4, perKey: 4, deadlineMs: 30_000 });
    expect(loadConfig({ ...server, QUARRY_USER_SQL_CONCURRENCY: "8", QUARRY_USER_SQL_PER_ORG: "2" }).userSql).toMatchObject({ total: 8, perKey: 2 });
    expect(loadConfig({ ...server, QUARRY_USER_SQL_CONCURRENCY: "3", QUARRY_USER_SQL_PER_ORG: "10" }).userSql).toMatchObject({ total: 3, perKey: 3 });
  });

  it("are one per analytics engine when embedded, under the same cap", () => {
    expect(loadConfig({}).userSql).toMatchObject({ total: 2, perKey: 2 });
    expect(loadConfig({ QUARRY_EMBEDDED_ANALYTICS_ENGINES: "3", QUARRY_USER_SQL_PER_ORG: "1" }).userSql).toMatchObject({ total: 3, perKey: 1 });
    expect(loadConfig({ QUARRY_EMBEDDED_ANALYTICS: "false" }).userSql).toMatchObject({ total: 1, perKey: 1 });
  });
});
