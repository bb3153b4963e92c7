/**
 * `to_tsvector('english', text)` of many texts for a fraction of its cost, assembled from the tsvectors of
 * their whitespace-separated pieces, which the engine computes once each. A document repeats its words
 * (200,000 words of prose hold 10-30,000 distinct pieces; a CSV export far fewer), and stemming every
 * occurrence is most of what to_tsvector costs. Loaded by the embedded tsvector calculator's worker through
 * tsx (tsvector-worker.mjs): relative imports only, nothing of the framework.
 *
 * Exact, not a reimplementation: every lexeme still comes from the engine's own parser and dictionaries.
 * What this file relies on is that the default parser never makes a token across ASCII whitespace, so a
 * piece read between spaces yields what it yields in the text. The exceptions are handled by computing the
 * whole text instead (`piecesOf`): a `<` (an XML tag or comment may hold spaces), and a text that opens
 * with a character the parser reads differently at the start of a text than after a space (`./a`, `~5`).
 * Where the text does open with a piece, that piece is read after a space: the parser's state at the
 * text's start and after whitespace are the same for letters and digits (tsvector-pieces.test.ts holds
 * this, and the whole assembly, to the engine's own result on hostile text).
 *
 * The pieces of one job are read in a few calls: each batch is the pieces joined with a sentinel word
 * between them, whose positions in the batch's tsvector mark where each piece's positions start. The
 * assembly then repeats what to_tsvector's own merge does: positions counted across the text, clamped at
 * 16,383, the first 255 distinct ones of a lexeme kept, lexemes in byte order, and the bytes of
 * `tsvectorsend`, which the binary COPY of the store takes as they are.
 */

import { isAsciiSpace } from "../extract/words";

/** Computes `tsvectorsend(to_tsvector('english', t))` of each text, in order (the engine's own). */
export type EngineTsvectors = (texts: string[]) => Promise<Uint8Array[]>;

/** A word no text holds (texts that do are computed whole), whose stem is itself. */
export const SENTINEL = "zzqquarryzz";
/** Longer pieces make the text computed whole: they are rare, and a batch must bound its positions. */
const MAX_PIECE_CHARS = 256;
/** Pieces per batch: the sentinel's positions must stay within the 255 a lexeme keeps. */
const BATCH_PIECES = 200;
/** Characters per batch: positions (at most one per character, plus the sentinels') stay under 16,383. */
const BATCH_CHARS = 12_000;
/**
 * The share of a job's pieces (occurrences) new to it beyond which its texts are computed whole. Measured
 * (to_tsvector per text = 1): 200,000 words of prose-like text 0.19, of Vim's manuals 0.74-0.88, 33,000 words
 * of this project's Markdown 0.84 (1.17 without this bound).
 */
const MAX_NEW_SHARE = 0.3;
/** to_tsvector's limits (PostgreSQL's MAXENTRYPOS - 1 and MAXNUMPOS - 1). */
const MAX_POSITION = 16_383;
const MAX_POSITIONS_PER_LEXEME = 255;

const fromUtf8 = new TextDecoder();

interface Lexeme {
  text: string;
  bytes: Uint8Array;
  /** Whether JavaScript's string order is its byte order (no UTF-16 surrogates or code units above them). */
  plain: boolean;
}

/** The text's whitespace-separated pieces, or null when it must be computed whole (see the file's comment). */
export function piecesOf(text: string): string[] | null {
  if (text.length > 0 && !isAsciiSpace(text.charCodeAt(0)) && !isAsciiAlphanumeric(text.charCodeAt(0))) return null;
  // The sentinel holds no whitespace, so any occurrence of it lies within one piece.
  if (text.includes("<") || text.toLowerCase().includes(SENTINEL)) return null;
  const pieces: string[] = [];
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    if (i === text.length || isAsciiSpace(text.charCodeAt(i))) {
      if (start >= 0) {
        if (i - start > MAX_PIECE_CHARS) return null;
        pieces.push(text.slice(start, i));
        start = -1;
      }
    } else if (start < 0) {
      start = i;
    }
  }
  return pieces;
}

function isAsciiAlphanumeric(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

/**
 * The tsvectors of the pieces seen so far, for the texts of one document: a later job reads only the pieces
 * it has not seen. Holds at most `maxPieces` pieces (then starts again empty), so a document of ever-new
 * words costs bounded memory. `maxNewShare`: see MAX_NEW_SHARE (tests set 1 to read every text by pieces).
 */
export class PieceTsvectors {
  /** Per piece: for each position it takes, the count of lexemes there, then their ids. */
  private pieces = new Map<string, Int32Array>();
  private lexemes: Lexeme[] = [];
  private lexemeIds = new Map<string, number>();

  constructor(
    private readonly maxPieces = 50_000,
    private readonly maxNewShare = MAX_NEW_SHARE,
  ) {}

  /** `tsvectorsend(to_tsvector('english', t))` of each text, in order, byte for byte. */
  async tsvectors(texts: string[], engine: EngineTsvectors): Promise<Uint8Array[]> {
    if (this.pieces.size > this.maxPieces) this.forget();
    const lists = texts.map(piecesOf);
    const missing = new Set<string>();
    let occurrences = 0;
    for (const list of lists) {
      if (list === null) continue;
      occurrences += list.length;
      for (const piece of list) if (!this.pieces.has(piece)) missing.add(piece);
    }
    // Reading a piece alone costs about twice its share of a whole text (its sentinel, and the rare words
    // are the costly ones): when too few pieces repeat, computing the texts whole is cheaper.
    if (missing.size > occurrences * this.maxNewShare) return engine(texts);
    const batches = batchesOf([...missing]);
    const whole = texts.filter((_, i) => lists[i] === null);
    const asked = [...batches.map(batchText), ...whole];
    const answers = asked.length > 0 ? await engine(asked) : [];
    for (let b = 0; b < batches.length; b++) {
      // A batch whose sentinels are not where they must be (never seen) is not trusted: all is computed whole.
      if (!this.learn(batches[b], decodeTsvector(answers[b]))) return engine(texts);
    }
    let next = batches.length;
    return lists.map((list) => (list === null ? answers[next++] : this.assemble(list)));
  }

  private forget(): void {
    this.pieces = new Map();
    this.lexemes = [];
    this.lexemeIds = new Map();
  }

  /** Records each piece's positions from its batch's tsvector; false when the batch is not as expected. */
  private learn(batch: string[], entries: DecodedEntry[]): boolean {
    const sentinel = entries.find((entry) => entry.lexeme === SENTINEL);
    if (!sentinel || sentinel.positions.length !== batch.length) return false;
    const ends = sentinel.positions;
    // Per piece, per position it takes: the lexeme ids there (none: a stop word).
    const slots = batch.map((_, k) => Array.from({ length: ends[k] - (k === 0 ? 0 : ends[k - 1]) - 1 }, () => [] as number[]));
    for (const entry of entries) {
      if (entry === sentinel) continue;
      // The batch's own limit could have dropped positions of a lexeme this frequent: not trusted.
      if (entry.positions.length >= MAX_POSITIONS_PER_LEXEME) return false;
      const id = this.lexemeId(entry.lexeme, entry.bytes);
      for (const position of entry.positions) {
        const k = pieceAt(ends, position);
        if (k === ends.length) return false;
        slots[k][position - (k === 0 ? 0 : ends[k - 1]) - 1].push(id);
      }
    }
    for (let k = 0; k < batch.length; k++) {
      const flat: number[] = [];
      for (const ids of slots[k]) flat.push(ids.length, ...ids);
      this.pieces.set(batch[k], Int32Array.from(flat));
    }
    return true;
  }

  private lexemeId(text: string, bytes: Uint8Array): number {
    let id = this.lexemeIds.get(text);
    if (id === undefined) {
      id = this.lexemes.length;
      this.lexemeIds.set(text, id);
      this.lexemes.push({ text, bytes, plain: !/[\uD800-\uFFFF]/.test(text) });
    }
    return id;
  }

  /** The text's tsvector from its pieces' (all known), as to_tsvector merges them. */
  private assemble(pieces: string[]): Uint8Array {
    const positions = new Map<number, number[]>();
    let position = 0;
    for (const piece of pieces) {
      const slots = this.pieces.get(piece)!;
      for (let i = 0; i < slots.length; ) {
        const count = slots[i++];
        position++;
        const at = Math.min(position, MAX_POSITION);
        for (let end = i + count; i < end; i++) {
          const list = positions.get(slots[i]);
          if (list === undefined) positions.set(slots[i], [at]);
          else if (list.length < MAX_POSITIONS_PER_LEXEME && list[list.length - 1] !== at) list.push(at);
        }
      }
    }
    const ids = [...positions.keys()].sort((a, b) => compareLexemes(this.lexemes[a], this.lexemes[b]));
    let size = 4;
    for (const id of ids) size += this.lexemes[id].bytes.length + 3 + 2 * positions.get(id)!.length;
    const out = new Uint8Array(size);
    const view = new DataView(out.buffer);
    view.setInt32(0, ids.length);
    let offset = 4;
    for (const id of ids) {
      const bytes = this.lexemes[id].bytes;
      out.set(bytes, offset);
      offset += bytes.length + 1;
      const list = positions.get(id)!;
      view.setUint16(offset, list.length);
      offset += 2;
      for (const at of list) {
        view.setUint16(offset, at);
        offset += 2;
      }
    }
    return out;
  }
}

/** PostgreSQL orders lexemes by their bytes (memcmp, then length); so does UTF-16 order for most text. */
function compareLexemes(a: Lexeme, b: Lexeme): number {
  if (a.plain && b.plain) return a.text < b.text ? -1 : a.text > b.text ? 1 : 0;
  const length = Math.min(a.bytes.length, b.bytes.length);
  for (let i = 0; i < length; i++) if (a.bytes[i] !== b.bytes[i]) return a.bytes[i] - b.bytes[i];
  return a.bytes.length - b.bytes.length;
}

/** The index of the first sentinel position above `position` (the piece it belongs to). */
function pieceAt(ends: number[], position: number): number {
  let low = 0;
  let high = ends.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (ends[middle] > position) high = middle;
    else low = middle + 1;
  }
  return low;
}

function batchesOf(pieces: string[]): string[][] {
  const batches: string[][] = [];
  let batch: string[] = [];
  let chars = 0;
  for (const piece of pieces) {
    if (batch.length === BATCH_PIECES || chars + piece.length > BATCH_CHARS) {
      batches.push(batch);
      batch = [];
      chars = 0;
    }
    batch.push(piece);
    chars += piece.length + SENTINEL.length + 2;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** Every piece after a space, as in its text (the first too: the parser reads a text's start differently). */
function batchText(batch: string[]): string {
  return batch.map((piece) => ` ${piece} ${SENTINEL}`).join("");
}

interface DecodedEntry {
  lexeme: string;
  bytes: Uint8Array;
  positions: number[];
}

/** Reads `tsvectorsend`'s bytes: a count, then per lexeme its NUL-ended text, a position count and the positions. */
export function decodeTsvector(bytes: Uint8Array): DecodedEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getInt32(0);
  const entries: DecodedEntry[] = [];
  let offset = 4;
  for (let n = 0; n < count; n++) {
    const end = bytes.indexOf(0, offset);
    const lexemeBytes = bytes.slice(offset, end);
    offset = end + 1;
    const positionCount = view.getUint16(offset);
    offset += 2;
    const positions: number[] = [];
    for (let p = 0; p < positionCount; p++, offset += 2) positions.push(view.getUint16(offset) & 0x3fff);
    entries.push({ lexeme: fromUtf8.decode(lexemeBytes), bytes: lexemeBytes, positions });
  }
  return entries;
}
