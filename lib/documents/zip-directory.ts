/** One file of a ZIP archive as its central directory declares it (sizes are claims until inflated). */
export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflate. */
  method: number;
  compressedSize: number;
  uncompressedSize: number;
  /** Offset of the entry's local header from the start of the file. */
  localHeaderOffset: number;
}

/** Result of reading a ZIP central directory from the end of a file. */
export type ZipDirectory = { ok: true; names: string[]; entries: ZipEntry[] } | { ok: false; reason: string };

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const MAX_COMMENT = 0xffff;

/**
 * Entry names of a ZIP archive, read from its last bytes only (`tail` holds
 * the final `tail.length` bytes of a file of `totalSize` bytes), so an upload
 * can be checked without keeping the whole file. ZIP64 is not needed for
 * documents under 4 GiB and is reported as unsupported.
 */
export function readZipDirectory(tail: Buffer, totalSize: number): ZipDirectory {
  const tailStart = totalSize - tail.length;
  const searchFrom = Math.max(0, tail.length - 22 - MAX_COMMENT);
  let end = -1;
  for (let i = tail.length - 22; i >= searchFrom; i--) {
    if (tail.readUInt32LE(i) === END_OF_DIRECTORY) {
      end = i;
      break;
    }
  }
  if (end < 0) return { ok: false, reason: "no ZIP end-of-directory record (the file is truncated or not a ZIP archive)" };
  const entryCount = tail.readUInt16LE(end + 10);
  const size = tail.readUInt32LE(end + 12);
  const offset = tail.readUInt32LE(end + 16);
  if (offset === 0xffffffff || entryCount === 0xffff) return { ok: false, reason: "ZIP64 archives are not supported" };
  if (offset + size > tailStart + end) return { ok: false, reason: "the ZIP directory points past the end of the file" };
  if (offset < tailStart) return { ok: false, reason: "the ZIP directory is too large to check" };
  const entries: ZipEntry[] = [];
  let at = offset - tailStart;
  for (let n = 0; n < entryCount; n++) {
    if (at + 46 > end || tail.readUInt32LE(at) !== DIRECTORY_ENTRY) return { ok: false, reason: "the ZIP directory is corrupt" };
    const nameLength = tail.readUInt16LE(at + 28);
    const extraLength = tail.readUInt16LE(at + 30);
    const commentLength = tail.readUInt16LE(at + 32);
    entries.push({
      name: tail.toString("utf8", at + 46, at + 46 + nameLength),
      method: tail.readUInt16LE(at + 10),
      compressedSize: tail.readUInt32LE(at + 20),
      uncompressedSize: tail.readUInt32LE(at + 24),
      localHeaderOffset: tail.readUInt32LE(at + 42),
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return { ok: true, names: entries.map((entry) => entry.name), entries };
}
