import crypto from "node:crypto";
import { Transform, type TransformCallback } from "node:stream";
import { fileTypeFromBuffer } from "file-type";
import { DOCUMENT_TYPES, type DocumentType } from "../file-types";
import { readZipDirectory } from "../zip-directory";

/** The bytes are not what the file claims to be (HTTP 415). */
export class ContentMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ContentMismatchError";
  }
}

/** The upload ended with no bytes at all. */
export class EmptyContentError extends Error {
  constructor() {
    super("The file is empty (0 bytes)");
    this.name = "EmptyContentError";
  }
}

/** The body ended with a different byte count than its Content-Length: a dropped or broken upload. */
export class IncompleteBodyError extends Error {
  constructor(readonly expected: number, readonly received: number) {
    super(`Received ${received} of ${expected} declared bytes`);
    this.name = "IncompleteBodyError";
  }
}

/** Enough for file-type's signatures and for a PDF header after leading junk. */
const HEAD_BYTES = 4100;
/** The end of a .docx kept to read its ZIP directory; thousands of entries fit. */
const TAIL_BYTES = 1024 * 1024;
const ZIP_LOCAL_HEADER = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/**
 * Passes an upload through unchanged while computing its size and SHA-256 and
 * checking that the bytes are the declared type. Memory stays bounded: the
 * first 4 KiB, and for .docx the last 1 MiB. It fails the stream with
 * ContentMismatchError or EmptyContentError, at the latest in its final step,
 * so a storage writer downstream never sees a successful end for bad content.
 */
export class ContentInspector extends Transform {
  private readonly hash = crypto.createHash("sha256");
  private head = Buffer.alloc(0);
  private headChecked = false;
  private tail: Buffer[] = [];
  private tailLength = 0;
  size = 0;
  sha256 = "";

  constructor(
    private readonly type: DocumentType,
    /** Content-Length, when declared: a body that ends short (or runs long) of it fails. */
    private readonly expectedSize: number | null = null,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length;
    if (this.expectedSize !== null && this.size > this.expectedSize) {
      callback(new IncompleteBodyError(this.expectedSize, this.size));
      return;
    }
    this.hash.update(chunk);
    if (this.type === "docx") this.keepTail(chunk);
    if ((this.type === "txt" || this.type === "csv") && hasBinaryBytes(chunk)) {
      callback(new ContentMismatchError(`The file is not ${DOCUMENT_TYPES[this.type].label.toLowerCase()}: it contains binary data (control bytes such as NUL); text must be UTF-8 or another 8-bit encoding`));
      return;
    }
    if (!this.headChecked) {
      this.head = Buffer.concat([this.head, chunk.subarray(0, HEAD_BYTES - this.head.length)]);
      if (this.head.length >= HEAD_BYTES) {
        this.checkHead().then(() => callback(null, chunk), callback);
        return;
      }
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    void (async () => {
      if (this.size === 0) throw new EmptyContentError();
      // Some servers end a request body quietly when the client disconnects; the declared length tells.
      if (this.expectedSize !== null && this.size !== this.expectedSize) throw new IncompleteBodyError(this.expectedSize, this.size);
      if (!this.headChecked) await this.checkHead();
      if (this.type === "docx") this.checkWordDirectory();
      this.sha256 = this.hash.digest("hex");
    })().then(() => callback(), callback);
  }

  private keepTail(chunk: Buffer) {
    this.tail.push(chunk);
    this.tailLength += chunk.length;
    while (this.tail.length > 1 && this.tailLength - this.tail[0].length >= TAIL_BYTES) {
      this.tailLength -= this.tail.shift()!.length;
    }
  }

  private async checkHead(): Promise<void> {
    this.headChecked = true;
    const head = this.head;
    if (this.type === "pdf" && !head.subarray(0, 1024).includes("%PDF-")) {
      throw new ContentMismatchError(`The file is not a PDF: ${await describe(head)}`);
    }
    if (this.type === "docx" && !head.subarray(0, 4).equals(ZIP_LOCAL_HEADER)) {
      throw new ContentMismatchError(`The file is not a Word document (.docx): ${await describe(head)}`);
    }
  }

  private checkWordDirectory() {
    const tail = Buffer.concat(this.tail);
    const directory = readZipDirectory(tail.subarray(Math.max(0, tail.length - TAIL_BYTES)), this.size);
    if (!directory.ok) throw new ContentMismatchError(`The file is not a readable Word document (.docx): ${directory.reason}`);
    if (!directory.names.includes("word/document.xml")) {
      const kind = directory.names.some((n) => n.startsWith("xl/")) ? " (it looks like an Excel workbook)" : directory.names.some((n) => n.startsWith("ppt/")) ? " (it looks like a PowerPoint deck)" : "";
      throw new ContentMismatchError(`The file is a ZIP archive without word/document.xml, so not a Word document (.docx)${kind}`);
    }
  }
}

/** What the bytes look like, for error messages. */
async function describe(head: Buffer): Promise<string> {
  const detected = await fileTypeFromBuffer(head);
  return detected ? `its content is ${detected.ext} (${detected.mime})` : "its content has no recognizable signature";
}

/** C0 control bytes that never occur in text (tab, line feed, form feed, carriage return and escape are allowed). */
function hasBinaryBytes(chunk: Buffer): boolean {
  for (let i = 0; i < chunk.length; i++) {
    const b = chunk[i];
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d && b !== 0x1b) return true;
  }
  return false;
}
