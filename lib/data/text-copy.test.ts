import { describe, expect, it } from "vitest";
import { TextCopyWriter } from "./text-copy";

/** Reads binary COPY input back: each row's ordinal and text values (null for length -1). */
function decode(data: Uint8Array): { ordinal: bigint; values: (string | null)[] }[] {
  const buffer = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  expect(buffer.subarray(0, 11).toString("latin1")).toBe("PGCOPY\n\xff\r\n\0");
  expect(buffer.readInt32BE(11)).toBe(0);
  expect(buffer.readInt32BE(15)).toBe(0);
  const rows: { ordinal: bigint; values: (string | null)[] }[] = [];
  let at = 19;
  for (;;) {
    const fields = buffer.readInt16BE(at);
    at += 2;
    if (fields === -1) break;
    expect(buffer.readInt32BE(at)).toBe(8);
    const ordinal = buffer.readBigInt64BE(at + 4);
    at += 12;
    const values: (string | null)[] = [];
    for (let i = 1; i < fields; i++) {
      const length = buffer.readInt32BE(at);
      at += 4;
      if (length === -1) values.push(null);
      else {
        values.push(buffer.subarray(at, at + length).toString("utf8"));
        at += length;
      }
    }
    rows.push({ ordinal, values });
  }
  expect(at).toBe(buffer.length);
  return rows;
}

describe("TextCopyWriter", () => {
  it("encodes ASCII, non-ASCII, long and null values and large ordinals, growing past its first buffer, and starts over after finish", () => {
    const writer = new TextCopyWriter(3, 32);
    const rows: { ordinal: number; values: (string | null)[] }[] = [
      { ordinal: 1, values: ["plain", null, ""] },
      { ordinal: 2 ** 40 + 7, values: ["café", "😀 emoji", "x".repeat(500)] },
      { ordinal: 3, values: [`${"é".repeat(70)}`, "a\tb\nc\\d", null] },
    ];
    for (const row of rows) writer.add(row.ordinal, row.values);
    expect(writer.rows).toBe(3);
    expect(decode(writer.finish())).toEqual(rows.map((row) => ({ ordinal: BigInt(row.ordinal), values: row.values })));
    expect(writer.rows).toBe(0);
    writer.add(9, ["again", "b", null]);
    expect(decode(writer.finish())).toEqual([{ ordinal: 9n, values: ["again", "b", null] }]);
  });
});
