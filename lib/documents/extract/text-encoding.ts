import { isUtf8 } from "node:buffer";
import chardet from "chardet";
import iconv from "iconv-lite";

/** Bytes chardet looks at: enough to recognise an encoding, cheap on a 50 MB file. */
const DETECTION_SAMPLE = 64 * 1024;
/** chardet's confidence (0-100) below which its guess loses to the Latin-1 fallback. */
const MIN_CONFIDENCE = 40;
/**
 * Latin-1 as browsers read it: windows-1252 is ISO-8859-1 with printable
 * characters (curly quotes, €, …) in place of the unused C1 controls.
 */
const LATIN1 = "windows-1252";

const BOMS: Array<{ bytes: number[]; encoding: string }> = [
  { bytes: [0xef, 0xbb, 0xbf], encoding: "utf-8" },
  { bytes: [0xff, 0xfe], encoding: "utf-16le" },
  { bytes: [0xfe, 0xff], encoding: "utf-16be" },
];

/** C0 controls other than tab, LF, FF, CR; and DEL. Extracted text has no use for them. */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000e-\u001f\u007f]+/g;

/** `text` with each run of control characters replaced by a space, so they neither glue words together nor reach an embedder. */
export function withoutControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, " ");
}

/**
 * Decodes a text file: a byte-order mark decides (UTF-8, UTF-16 LE/BE);
 * otherwise valid UTF-8 is UTF-8; otherwise chardet's guess when confident
 * (e.g. windows-1251, Shift_JIS), else Latin-1. The BOM is not part of the text.
 */
export function decodeText(bytes: Uint8Array): { text: string; encoding: string } {
  const encoding = detectEncoding(bytes);
  const text = encoding === "utf-8" ? new TextDecoder("utf-8").decode(bytes) : iconv.decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), encoding);
  return { text: withoutControlCharacters(text), encoding };
}

function detectEncoding(bytes: Uint8Array): string {
  for (const bom of BOMS) {
    if (bom.bytes.every((byte, index) => bytes[index] === byte)) return bom.encoding;
  }
  if (isUtf8(bytes)) return "utf-8";
  for (const match of chardet.analyse(bytes.subarray(0, DETECTION_SAMPLE))) {
    if (match.confidence < MIN_CONFIDENCE) break;
    const name = match.name.toLowerCase();
    // Not UTF-8 (checked above), and a BOM-less UTF-16/32 guess is not trusted.
    if (name.startsWith("utf") || name === "ascii") continue;
    if (name === "iso-8859-1" || name === LATIN1) return LATIN1;
    if (iconv.encodingExists(name)) return name;
  }
  return LATIN1;
}
