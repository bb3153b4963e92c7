import "@/test/embedded-analytics";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { asJsonRows } from "@/lib/query/compile";
import { runReadOnly } from "@/lib/query/execute";
import type { RowSource } from "./formats/types";
import { type LoadRequest, loadTable } from "./load";

/* Embedded: user SQL runs on analytics copies of the primary (docs/embedded-engine.md); they must carry an organization's tables and follow its loads. */

const acme = { orgId: "org_acme" };
const rows = (values: string[]): RowSource => ({ header: ["n"], rows: (async function* () { for (const v of values) yield [v]; })() });

describe("an organization's tables on the reader's engine", () => {
  it("are read as loaded, and a load is seen by the next statement", async () => {
    const table = `copied_${randomBytes(4).toString("hex")}`;
    const request = (mode: LoadRequest["mode"]): LoadRequest => ({ table, mode, onBadRow: "fail", columns: [{ name: "n", type: "integer", from: 0 }] });
    const total = () => runReadOnly(acme, asJsonRows(`SELECT sum(n)::int AS total FROM ${table}`), [], { timeZone: "UTC" });
    await loadTable(acme, request("create"), rows(["1", "2"]));
    expect(await total()).toEqual([{ total: 3 }]);
    await loadTable(acme, request("replace"), rows(["10"]));
    expect(await total()).toEqual([{ total: 10 }]);
    await loadTable(acme, request("append"), rows(["5"]));
    expect(await total()).toEqual([{ total: 15 }]);
    const db = await getDb();
    if (db.kind === "pglite") expect(db.analytics?.running).toBeGreaterThan(0);
  }, 300_000);
});
