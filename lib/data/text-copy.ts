/**
 * Rows of text values in PostgreSQL's binary COPY format (the one input lib/db/bulk.ts's copyBinary
 * takes on both engines), each row led by its ordinal as a bigint. A text value is sent as its UTF-8
 * bytes; null as length -1. The values are already canonical (parseCell), so the staging table is
 * all text and the typed insert that follows cannot meet a value it does not read.
 *
 * The rows are encoded straight into one buffer that grows by doubling and is reused chunk after
 * chunk: no object per row or value for the collector to chase (a load of a million rows made
 * millions of small buffers, and the process grew by hundreds of MB before they were freed).
 */
const HEADER = Buffer.concat([Buffer.from("PGCOPY\n\xff\r\n\0", "latin1"), Buffer.alloc(8)]); // flags, extension length: zero
const TRAILER_BYTES = 2;

export class TextCopyWriter {
  private buffer: Buffer;
  private size = HEADER.length;
  private rowCount = 0;

  constructor(
    private readonly columns: number,
    initialBytes = 64 * 1024,
  ) {
    this.buffer = Buffer.allocUnsafe(Math.max(initialBytes, HEADER.length + TRAILER_BYTES));
    HEADER.copy(this.buffer, 0);
  }

  /** Room for `bytes` more (and the trailer). */
  private reserve(bytes: number): void {
    const needed = this.size + bytes + TRAILER_BYTES;
    if (needed <= this.buffer.length) return;
    let length = this.buffer.length * 2;
    while (length < needed) length *= 2;
    const grown = Buffer.allocUnsafe(length);
    this.buffer.copy(grown, 0, 0, this.size);
    this.buffer = grown;
  }

  add(ordinal: number, values: readonly (string | null)[]): void {
    this.reserve(14);
    this.size = this.buffer.writeInt16BE(this.columns + 1, this.size);
    this.size = this.buffer.writeInt32BE(8, this.size);
    // The ordinal (a row number, far below 2^53) as a bigint: its high and low 32 bits (no BigInt per row).
    this.size = this.buffer.writeUInt32BE(Math.floor(ordinal / 2 ** 32), this.size);
    this.size = this.buffer.writeUInt32BE(ordinal >>> 0, this.size);
    for (const value of values) {
      if (value === null) {
        this.reserve(4);
        this.size = this.buffer.writeInt32BE(-1, this.size);
        continue;
      }
      // A UTF-16 code unit takes at most 3 UTF-8 bytes: reserve that, write, then set the length actually written.
      this.reserve(4 + value.length * 3);
      const written = this.writeUtf8(value, this.size + 4);
      this.buffer.writeInt32BE(written, this.size);
      this.size += 4 + written;
    }
    this.rowCount++;
  }

  /**
   * `value` as UTF-8 at `offset`; its byte length. Most cells are short ASCII (numbers, dates, codes), which a loop
   * copies faster than a call into Buffer.write; anything else goes to Buffer.write.
   */
  private writeUtf8(value: string, offset: number): number {
    const length = value.length;
    if (length > 64) return this.buffer.write(value, offset, "utf8");
    const buffer = this.buffer;
    for (let i = 0; i < length; i++) {
      const code = value.charCodeAt(i);
      if (code >= 0x80) return buffer.write(value, offset, "utf8");
      buffer[offset + i] = code;
    }
    return length;
  }

  /** Bytes written so far. */
  get bytes(): number {
    return this.size;
  }

  get rows(): number {
    return this.rowCount;
  }

  /**
   * The COPY input (with its trailer), a view of the writer's buffer: use it before the next `add`, which
   * writes over it (the writer starts over empty).
   */
  finish(): Uint8Array {
    this.reserve(0);
    const end = this.buffer.writeInt16BE(-1, this.size);
    const data = this.buffer.subarray(0, end);
    this.size = HEADER.length;
    this.rowCount = 0;
    return data;
  }
}
