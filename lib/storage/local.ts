import "server-only";
import crypto from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { LOCAL_SIGNED_FILE_PATH, signLocalDownload } from "./local-signed-url";
import { ObjectNotFoundError, assertSafeKey, assertSafePrefix, guardedBody, type ListedObject, type ObjectStorage, type PutStreamOptions, type SignedDownloadOptions } from "./object-storage";

/**
 * Objects as files under one folder. A write goes to a temporary file in the
 * same folder tree and is renamed into place only when complete, so a reader
 * never sees half a file. Download URLs are HMAC-signed routes of this app.
 */
export class LocalObjectStorage implements ObjectStorage {
  readonly provider = "local" as const;

  constructor(
    private readonly root: string,
    /** Keys are `<prefix><orgId>/...`; a signed URL names the organization and opens only keys in its folder. */
    private readonly prefix: string,
  ) {}

  private pathOf(key: string): string {
    assertSafeKey(key);
    const full = path.resolve(this.root, key);
    if (!full.startsWith(this.root + path.sep)) throw new Error(`Storage key escapes the storage folder: ${key}`);
    return full;
  }

  async putStream(key: string, body: Readable, options: PutStreamOptions): Promise<void> {
    const target = this.pathOf(key);
    const temporary = path.join(this.root, ".tmp", `${crypto.randomUUID()}.part`);
    await fsp.mkdir(path.dirname(temporary), { recursive: true });
    await fsp.mkdir(path.dirname(target), { recursive: true });
    const file = fs.createWriteStream(temporary, { flags: "wx", mode: 0o600 });
    try {
      await pipeline(guardedBody(body, options), file);
      await fsp.rename(temporary, target);
    } catch (error) {
      // A write stream destroyed while still opening creates its file afterwards: wait for it to close first.
      if (!file.closed) await new Promise<void>((resolve) => file.once("close", () => resolve()));
      await fsp.rm(temporary, { force: true });
      throw error;
    }
  }

  async get(key: string) {
    const file = this.pathOf(key);
    try {
      const stat = await fsp.stat(file);
      return { body: fs.createReadStream(file), size: stat.size };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new ObjectNotFoundError(key);
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const file = this.pathOf(key);
    await fsp.rm(file, { force: true });
    // Drop the now-empty per-document folder; a non-empty one (another version) stays.
    await fsp.rmdir(path.dirname(file)).catch(() => undefined);
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    assertSafePrefix(prefix);
    const folder = this.pathOf(prefix.slice(0, -1));
    // Temporary files of writes in flight live under .tmp at the root, never under a key's folder.
    yield* this.walk(folder, prefix);
  }

  private async *walk(folder: string, prefix: string): AsyncIterable<ListedObject> {
    let entries: fs.Dirent[];
    try {
      entries = await fsp.readdir(folder, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    for (const entry of entries) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) yield* this.walk(full, `${prefix}${entry.name}/`);
      else if (entry.isFile()) {
        // Deleted since the folder was read: not listed.
        const stat = await fsp.stat(full).catch(() => undefined);
        if (stat) yield { key: `${prefix}${entry.name}`, size: stat.size, lastModified: stat.mtime };
      }
    }
  }

  async signedDownloadUrl(key: string, options: SignedDownloadOptions): Promise<string> {
    this.pathOf(key);
    const orgId = key.startsWith(this.prefix) ? key.slice(this.prefix.length).split("/")[0] : "";
    if (!orgId || !key.startsWith(`${this.prefix}${orgId}/`)) throw new Error(`Storage key is outside every organization folder: ${key}`);
    const query = signLocalDownload({
      key,
      orgId,
      filename: options.filename,
      contentType: options.contentType,
      expires: Math.floor(Date.now() / 1000) + options.expiresInSeconds,
      disposition: options.disposition ?? "attachment",
    });
    return `${options.appOrigin}${LOCAL_SIGNED_FILE_PATH}?${query}`;
  }
}
