/**
 * Rows of text values in PostgreSQL's binary COPY format (the one input lib/db/bulk.ts's copyBinary
 * takes on both engines), each row led by its ordinal as a bigint. A text value is sent as its UTF-8
 * bytes; null as length -1. The values are already canonical (parseCell), so the staging table is
 * all text and the typed insert that follows cannot meet a value it does not read.
 */
export class TextCopyWriter {
  private chunks: Buffer[] = [TextCopyWriter.header()];
  private size = 19;
  private rowCount = 0;

  constructor(private readonly columns: number) {}

  private static header(): Buffer {
    const header = Buffer.alloc(19);
    Buffer.from("PGCOPY\n\xff\r\n\0", "latin1").copy(header, 0);
    // flags (4 bytes) and header extension length (4 bytes) stay zero.
    return header;
  }

  add(ordinal: number, values: readonly (string | null)[]): void {
    const head = Buffer.alloc(14);
    head.writeInt16BE(this.columns + 1, 0);
    head.writeInt32BE(8, 2);
    head.writeBigInt64BE(BigInt(ordinal), 6);
    this.chunks.push(head);
    this.size += head.length;
    for (const value of values) {
      const length = Buffer.alloc(4);
      if (value === null) {
        length.writeInt32BE(-1, 0);
        this.chunks.push(length);
        this.size += 4;
        continue;
      }
      const bytes = Buffer.from(value, "utf8");
      length.writeInt32BE(bytes.length, 0);
      this.chunks.push(length, bytes);
      this.size += 4 + bytes.length;
    }
    this.rowCount++;
  }

  /** Bytes written so far. */
  get bytes(): number {
    return this.size;
  }

  get rows(): number {
    return this.rowCount;
  }

  /** The COPY input (with its trailer); the writer starts over empty. */
  finish(): Uint8Array {
    const trailer = Buffer.alloc(2);
    trailer.writeInt16BE(-1, 0);
    const data = Buffer.concat([...this.chunks, trailer]);
    this.chunks = [TextCopyWriter.header()];
    this.size = 19;
    this.rowCount = 0;
    return data;
  }
}
