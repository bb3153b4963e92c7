import { Transform, type TransformCallback } from "node:stream";
import { dataSourceError, type SourceLimits } from "./types";

/** Passes bytes through, failing the stream once more than `maxBytes` went by. */
export function byteLimit(maxBytes: number, onBytes?: (total: number) => void): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      total += chunk.length;
      if (total > maxBytes) return callback(dataSourceError("max_bytes", `The file is larger than the limit of ${maxBytes} bytes`));
      onBytes?.(total);
      callback(null, chunk);
    },
  });
}

/** UTF-8 bytes of `text`, computed only when its length alone cannot decide against `max`. */
export function exceedsBytes(text: string, max: number): boolean {
  // A UTF-16 code unit is at most 3 UTF-8 bytes.
  if (text.length * 3 <= max) return false;
  return text.length > max || Buffer.byteLength(text) > max;
}

export function checkHeader(header: readonly string[], limits: SourceLimits): void {
  if (header.length === 0) throw dataSourceError("no_header", "The file has no header row naming its columns");
  if (header.length > limits.maxColumns) throw dataSourceError("max_columns", `The header has ${header.length} columns; the limit is ${limits.maxColumns}`);
  header.forEach((name, index) => {
    if (exceedsBytes(name, limits.maxFieldBytes)) throw dataSourceError("max_field_bytes", `Column ${index + 1}'s name is longer than the limit of ${limits.maxFieldBytes} bytes`);
  });
}

/**
 * Brings each row to the header's width (missing values are null) and enforces the row, column and
 * field limits; numbers rows from 1 for the errors it raises.
 */
export class RowShaper {
  rows = 0;

  constructor(
    private readonly header: readonly string[],
    private readonly limits: SourceLimits,
  ) {}

  shape(values: (string | null)[]): (string | null)[] {
    const row = ++this.rows;
    if (row > this.limits.maxRows) throw dataSourceError("max_rows", `The file has more than the limit of ${this.limits.maxRows} rows`, row);
    const width = this.header.length;
    if (values.length > width) {
      for (let column = width; column < values.length; column++) {
        if (values[column] !== null) throw dataSourceError("extra_values", `${values.length} values, but the header names ${width} columns`, row);
      }
      values.length = width;
    }
    for (let column = 0; column < values.length; column++) {
      const value = values[column];
      if (value !== null && exceedsBytes(value, this.limits.maxFieldBytes)) {
        throw dataSourceError("max_field_bytes", `the value of column "${this.header[column]}" is longer than the limit of ${this.limits.maxFieldBytes} bytes`, row);
      }
    }
    while (values.length < width) values.push(null);
    return values;
  }
}
