// The part of unzipper 0.10 (exceljs's own zip reader) that xlsx.ts uses; the package ships no types.
declare module "unzipper" {
  import type { Duplex, Readable } from "node:stream";

  interface Entry extends Readable {
    path: string;
    type: "File" | "Directory";
    autodrain(): void;
  }
  /** A stream that takes a zip file's bytes and emits its entries in local-header order. */
  export function Parse(options?: { forceStream?: boolean }): Duplex & AsyncIterable<Entry>;
}
