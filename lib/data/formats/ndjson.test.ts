import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { endless, fixture, readAll, sourceError } from "./test-support";

const text = (content: string) => Readable.from([Buffer.from(content)]);

describe("NDJSON", () => {
  it("reads one object per line: the first object's keys are the header; typed values become canonical text", async () => {
    const { header, rows } = await readAll(fixture("events.ndjson"), { format: "ndjson" });
    expect(header).toEqual(["id", "kind", "at", "ok", "tags"]);
    expect(rows).toEqual([
      ["1", "click", "2024-03-01T10:00:00Z", "true", '["a","b"]'],
      ["2", "view", "2024-03-01T10:05:00+02:00", "false", null],
      ["3", null, "2024-03-02 08:00", "true", "[]"],
    ]);
  });

  it("splits lines on bytes, so a multi-byte character across chunks stays whole", async () => {
    const bytes = Buffer.from('{"city":"Zürich"}\r\n{"city":"Ødegård"}');
    const chunks = Array.from(bytes, (byte) => Buffer.from([byte]));
    expect((await readAll(Readable.from(chunks), { format: "ndjson" })).rows).toEqual([["Zürich"], ["Ødegård"]]);
  });

  it("refuses, naming the row: a key not in the first object, a line that is not an object, an integer JSON cannot hold exactly", async () => {
    expect(await sourceError(readAll(text('{"a":1}\n{"a":2,"b":3}\n'), { format: "ndjson" }))).toMatchObject({ code: "extra_values", row: 2, message: 'Row 2: the key "b" is not among the first object\'s keys' });
    expect(await sourceError(readAll(text('{"a":1}\n\n[1]\n'), { format: "ndjson" }))).toMatchObject({ code: "syntax", row: 2 });
    expect(await sourceError(readAll(text('{"a":1}\n{"a":\n'), { format: "ndjson" }))).toMatchObject({ code: "syntax", row: 2 });
    expect(await sourceError(readAll(text('{"a":1}\n{"a":12345678901234567890}\n'), { format: "ndjson" }))).toMatchObject({ code: "syntax", row: 2 });
    expect(await sourceError(readAll(text(""), { format: "ndjson" }))).toMatchObject({ code: "no_header" });
  });

  it("limits: rows, columns, field bytes, bytes", async () => {
    expect(await sourceError(readAll(text('{"a":1}\n{"a":2}\n'), { format: "ndjson", limits: { maxRows: 1 } }))).toMatchObject({ code: "max_rows", row: 2 });
    expect(await sourceError(readAll(text('{"a":1,"b":2,"c":3}\n'), { format: "ndjson", limits: { maxColumns: 2 } }))).toMatchObject({ code: "max_columns" });
    expect(await sourceError(readAll(text(`{"a":"${"x".repeat(200)}"}\n`), { format: "ndjson", limits: { maxFieldBytes: 100 } }))).toMatchObject({ code: "max_field_bytes", row: 1 });
    expect(await sourceError(readAll(text('{"a":1}\n'.repeat(100)), { format: "ndjson", limits: { maxBytes: 500 } }))).toMatchObject({ code: "max_bytes" });
  });

  it("an endless line is refused after maxLineBytes, never buffered", async () => {
    const limit = 1024 * 1024;
    const line = endless(" ", '{"a":1}\n{"a":');
    expect(await sourceError(readAll(line.stream, { format: "ndjson", limits: { maxLineBytes: limit } }))).toMatchObject({ code: "max_line_bytes", row: 2, kind: "too_large" });
    expect(line.pulled()).toBeLessThan(limit * 2);
  });
});
