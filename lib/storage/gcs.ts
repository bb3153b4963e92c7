import "server-only";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Storage, type StorageOptions } from "@google-cloud/storage";
import type { GcsStorageSettings } from "@/lib/config/storage";
import { ObjectNotFoundError, assertSafeKey, assertSafePrefix, contentDisposition, guardedBody, type ListedObject, type ObjectStorage, type PutStreamOptions, type SignedDownloadOptions } from "./object-storage";

export function gcsClientOptions(settings: GcsStorageSettings["gcs"]): StorageOptions {
  return {
    projectId: settings.project_id,
    // Workload identity: Application Default Credentials from the metadata server; no key file.
    keyFilename: settings.use_workload_identity ? undefined : settings.key_file,
  };
}

/**
 * Google Cloud Storage. Uploads are resumable sessions finalized only when the
 * body ended; an errored body leaves an unfinished session, never an object.
 * Downloads are V4 signed URLs (with workload identity the library signs
 * through the IAM signBlob API, which needs iam.serviceAccounts.signBlob).
 */
export class GcsObjectStorage implements ObjectStorage {
  readonly provider = "gcs" as const;
  private readonly storage: Storage;

  constructor(private readonly bucket: string, settings: GcsStorageSettings["gcs"]) {
    this.storage = new Storage(gcsClientOptions(settings));
  }

  private file(key: string) {
    assertSafeKey(key);
    return this.storage.bucket(this.bucket).file(key);
  }

  async putStream(key: string, body: Readable, options: PutStreamOptions): Promise<void> {
    const file = this.file(key);
    await pipeline(guardedBody(body, options), file.createWriteStream({ contentType: options.contentType, resumable: true, validation: "crc32c" }));
  }

  async get(key: string) {
    const file = this.file(key);
    try {
      const [metadata] = await file.getMetadata();
      return { body: file.createReadStream(), size: Number(metadata.size ?? 0) };
    } catch (error) {
      if ((error as { code?: number }).code === 404) throw new ObjectNotFoundError(key);
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.file(key).delete({ ignoreNotFound: true });
  }

  /** files.list a page at a time (an unfinished resumable session is no object). */
  async *list(prefix: string): AsyncIterable<ListedObject> {
    assertSafePrefix(prefix);
    let pageToken: string | undefined;
    do {
      const [files, next] = await this.storage.bucket(this.bucket).getFiles({ prefix, autoPaginate: false, maxResults: 1_000, pageToken });
      for (const file of files) yield { key: file.name, size: Number(file.metadata.size ?? 0), lastModified: new Date(file.metadata.updated ?? 0) };
      pageToken = (next as { pageToken?: string } | null)?.pageToken;
    } while (pageToken);
  }

  async signedDownloadUrl(key: string, options: SignedDownloadOptions): Promise<string> {
    const [url] = await this.file(key).getSignedUrl({
      version: "v4",
      action: "read",
      expires: Date.now() + options.expiresInSeconds * 1000,
      responseDisposition: contentDisposition(options.filename, options.disposition),
      responseType: options.contentType,
    });
    return url;
  }
}
