import "server-only";
import type { Readable } from "node:stream";
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client, type S3ClientConfig } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import type { S3StorageSettings } from "@/lib/config/storage";
import { ObjectNotFoundError, assertSafeKey, assertSafePrefix, contentDisposition, guardedBody, type ListedObject, type ObjectStorage, type PutStreamOptions, type SignedDownloadOptions } from "./object-storage";

/** 8 MiB parts, two in flight: at most ~16 MiB of one upload is in memory at a time. */
const PART_SIZE = 8 * 1024 * 1024;

export function s3ClientConfig(settings: S3StorageSettings["s3"]): S3ClientConfig {
  const { access_key_id, secret_access_key, session_token, region, endpoint_url } = settings;
  return {
    region,
    // No keys: the SDK's default chain (IAM role, web identity, instance profile) supplies credentials.
    credentials: access_key_id && secret_access_key ? { accessKeyId: access_key_id, secretAccessKey: secret_access_key, sessionToken: session_token } : undefined,
    ...(endpoint_url
      ? {
          endpoint: endpoint_url,
          forcePathStyle: true,
          // S3-compatible servers often reject the SDK's default streaming checksums (aws-chunked trailers).
          requestChecksumCalculation: "WHEN_REQUIRED" as const,
          responseChecksumValidation: "WHEN_REQUIRED" as const,
        }
      : {}),
  };
}

/**
 * Amazon S3 or an S3-compatible server. Uploads go through lib-storage's
 * multipart Upload; a failed body aborts the multipart upload, so no object
 * appears. Downloads are presigned GetObject URLs.
 */
export class S3ObjectStorage implements ObjectStorage {
  readonly provider = "s3" as const;
  private readonly client: S3Client;

  constructor(private readonly bucket: string, settings: S3StorageSettings["s3"]) {
    this.client = new S3Client(s3ClientConfig(settings));
  }

  async putStream(key: string, body: Readable, options: PutStreamOptions): Promise<void> {
    assertSafeKey(key);
    const guarded = guardedBody(body, options);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: guarded, ContentType: options.contentType },
      partSize: PART_SIZE,
      queueSize: 2,
      leavePartsOnError: false,
    });
    const done = upload.done();
    // A failing body may surface on either promise first; the other must not become an unhandled rejection.
    const bodyFailed = new Promise<never>((_, reject) => guarded.once("error", reject));
    done.catch(() => undefined);
    bodyFailed.catch(() => undefined);
    try {
      await Promise.race([done, bodyFailed]);
    } catch (error) {
      await upload.abort().catch(() => undefined);
      guarded.destroy();
      throw error;
    }
  }

  async get(key: string) {
    assertSafeKey(key);
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return { body: object.Body as Readable, size: Number(head.ContentLength ?? 0) };
    } catch (error) {
      if (isNotFound(error)) throw new ObjectNotFoundError(key);
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertSafeKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** ListObjectsV2, 1,000 keys a page (a multipart upload in flight is no object until completed). */
  async *list(prefix: string): AsyncIterable<ListedObject> {
    assertSafePrefix(prefix);
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const object of page.Contents ?? []) {
        if (object.Key) yield { key: object.Key, size: Number(object.Size ?? 0), lastModified: object.LastModified ?? new Date(0) };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async signedDownloadUrl(key: string, options: SignedDownloadOptions): Promise<string> {
    assertSafeKey(key);
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentDisposition: contentDisposition(options.filename, options.disposition),
      ResponseContentType: options.contentType,
    });
    return getSignedUrl(this.client, command, { expiresIn: options.expiresInSeconds });
  }
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "NoSuchKey" || e?.name === "NotFound" || e?.$metadata?.httpStatusCode === 404;
}
