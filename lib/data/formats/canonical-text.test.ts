import { describe, expect, it } from "vitest";
import { withTenant } from "@/lib/db/tenant";
import { parseCell, type ColumnType } from "./infer";

const SQL_TYPE: Record<ColumnType, string> = { text: "text", integer: "int8", numeric: "numeric", boolean: "boolean", date: "date", timestamptz: "timestamptz" };

/** What PostgreSQL makes of `text` as `type` in `timeZone`, printed back by PostgreSQL. */
async function asPostgres(type: ColumnType, text: string, timeZone = "UTC"): Promise<string> {
  const rows = await withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe<{ value: string }[]>(`SELECT CAST($1::text AS ${SQL_TYPE[type]})::text AS value`, text), { timeZone });
  return rows[0].value;
}

describe("parseCell's canonical text is what PostgreSQL reads as the value meant", () => {
  it.each([
    ["integer", "+9223372036854775807", "9223372036854775807"],
    ["numeric", "1.2e3", "1200"],
    ["numeric", "-.50", "-0.50"],
    ["boolean", "Y", "true"],
    ["date", "2024/02/29", "2024-02-29"],
    ["timestamptz", "2024-03-01T10:00:00.123456+0530", "2024-03-01 04:30:00.123456+00"],
    ["timestamptz", "2024-03-01T10:00:00Z", "2024-03-01 10:00:00+00"],
    ["text", " as is ", " as is "],
  ] as const)("%s %j", async (type, text, printed) => {
    expect(await asPostgres(type, parseCell(type, text))).toBe(printed);
  });

  it("a timestamp without a zone (and a date) is read in the session's zone, the organization's for a load, daylight saving included", async () => {
    expect(await asPostgres("timestamptz", parseCell("timestamptz", "2024-07-01 12:00"), "Europe/Paris")).toBe("2024-07-01 12:00:00+02");
    expect(await asPostgres("timestamptz", parseCell("timestamptz", "2024-01-01 12:00"), "Europe/Paris")).toBe("2024-01-01 12:00:00+01");
    expect(await asPostgres("timestamptz", parseCell("timestamptz", "2024-01-01"), "America/New_York")).toBe("2024-01-01 00:00:00-05");
  });
});
