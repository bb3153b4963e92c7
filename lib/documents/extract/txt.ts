import { decodeText } from "./text-encoding";
import type { TextSegment } from "./types";

/** A plain-text file as one segment, decoded per `decodeText`. */
export function extractTxt(bytes: Uint8Array): { segments: TextSegment[]; encoding: string } {
  const { text, encoding } = decodeText(bytes);
  return { segments: [{ text }], encoding };
}
