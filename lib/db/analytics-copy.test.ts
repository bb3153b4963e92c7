import "@/test/embedded-analytics";
import { describe, expect, it } from "vitest";
import { getDb } from "./client";
import { withTenant } from "./tenant";

/** What user SQL runs as: the reader role, so the embedded analytics copy answers. */
const asReader = <T,>(sql: string) => withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe<T[]>(sql), { role: "reader", readOnly: true });

describe("the embedded analytics copy", () => {
  it("answers with rows and definitions written on the primary just before", async () => {
    const { system } = await getDb();
    expect(await asReader<{ n: number }>("SELECT count(*)::int AS n FROM locations WHERE id = 'loc_acme_copytest'")).toEqual([{ n: 0 }]);
    await system.query("INSERT INTO locations (id, org_id, code, name, city, region) VALUES ('loc_acme_copytest', 'org_acme', 'CPT', 'Copy test', 'Boston', 'East')");
    expect(await asReader<{ n: number }>("SELECT count(*)::int AS n FROM locations WHERE id = 'loc_acme_copytest'")).toEqual([{ n: 1 }]);
    await system.exec(`CREATE FUNCTION copy_test_answer() RETURNS int LANGUAGE sql AS 'SELECT 42';
      GRANT EXECUTE ON FUNCTION copy_test_answer() TO quarry_reader`);
    expect(await asReader<{ n: number }>("SELECT copy_test_answer() AS n")).toEqual([{ n: 42 }]);
  }, 120_000);
});
