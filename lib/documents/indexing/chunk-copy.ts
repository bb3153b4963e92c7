import type { DocumentChunk } from "../extract/chunk";

/**
 * PostgreSQL's binary COPY format for rows of document_chunks. Vectors travel as pgvector's binary
 * form (int16 dimensions, int16 unused, float4 values, big-endian): no float is printed or parsed
 * as text on the way in, which is what made text inserts slow in PGlite (float parsing in
 * WebAssembly). The `pgvector` npm package only has text and SQL helpers, so this is written here.
 */
export const CHUNK_COPY_COLUMNS = [
  "org_id",
  "document_id",
  "generation",
  "ordinal",
  "text",
  "word_start",
  "word_end",
  "page_start",
  "page_end",
  "row_start",
  "row_end",
  "model",
  "dims",
  "embedding",
  "tsv",
] as const;

/** One row of document_chunks: a chunk of one generation of a document, with its embedding. */
export interface ChunkCopyRow extends DocumentChunk {
  orgId: string;
  documentId: string;
  generation: number;
  model: string;
  embedding: ArrayLike<number>;
  /**
   * The binary form (`tsvectorsend`) of `to_tsvector('english', text)` as the database computes it
   * (tsvector-calculator.ts), spliced into the row as is; null or absent: the database's trigger
   * computes it on insert (migration 0020).
   */
  tsv?: Uint8Array | null;
}

const SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");

/** Accumulates rows into one buffer; `finish()` returns the whole COPY stream. */
export class ChunkCopyWriter {
  private buffer = Buffer.alloc(1 << 16);
  private length = 0;
  rows = 0;

  constructor() {
    this.reserve(SIGNATURE.length + 8);
    SIGNATURE.copy(this.buffer, 0);
    this.buffer.fill(0, SIGNATURE.length, SIGNATURE.length + 8); // flags, header extension length
    this.length = SIGNATURE.length + 8;
  }

  add(row: ChunkCopyRow): void {
    const dims = row.embedding.length;
    for (let i = 0; i < dims; i++) if (!Number.isFinite(row.embedding[i])) throw new Error("embedding contains a non-finite value");
    this.int16(CHUNK_COPY_COLUMNS.length);
    this.text(row.orgId);
    this.text(row.documentId);
    this.int32(row.generation);
    this.int32(row.ordinal);
    this.text(row.text);
    this.int32(row.wordStart);
    this.int32(row.wordEnd);
    this.int32(row.pageStart);
    this.int32(row.pageEnd);
    this.int32(row.rowStart);
    this.int32(row.rowEnd);
    this.text(row.model);
    this.int32(dims);
    const size = 4 + dims * 4;
    this.reserve(4 + size);
    const b = this.buffer;
    let at = this.length;
    b.writeInt32BE(size, at);
    b.writeInt16BE(dims, at + 4);
    b.writeInt16BE(0, at + 6);
    at += 8;
    for (let i = 0; i < dims; i++, at += 4) b.writeFloatBE(row.embedding[i], at);
    this.length = at;
    this.bytes(row.tsv ?? null);
    this.rows++;
  }

  /** The COPY data with its trailer; the writer must not be used afterwards. */
  finish(): Uint8Array {
    this.int16(-1);
    return this.buffer.subarray(0, this.length);
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  private int16(value: number): void {
    this.reserve(2);
    this.buffer.writeInt16BE(value, this.length);
    this.length += 2;
  }

  /** An int4 field; null is length -1. */
  private int32(value: number | null): void {
    this.reserve(8);
    if (value === null) {
      this.buffer.writeInt32BE(-1, this.length);
      this.length += 4;
      return;
    }
    this.buffer.writeInt32BE(4, this.length);
    this.buffer.writeInt32BE(value, this.length + 4);
    this.length += 8;
  }

  /** A field already in its binary form; null is length -1. */
  private bytes(value: Uint8Array | null): void {
    this.reserve(4 + (value?.length ?? 0));
    this.buffer.writeInt32BE(value ? value.length : -1, this.length);
    this.length += 4;
    if (!value) return;
    this.buffer.set(value, this.length);
    this.length += value.length;
  }

  private text(value: string): void {
    const bytes = Buffer.byteLength(value, "utf8");
    this.reserve(4 + bytes);
    this.buffer.writeInt32BE(bytes, this.length);
    this.buffer.write(value, this.length + 4, "utf8");
    this.length += 4 + bytes;
  }
}
