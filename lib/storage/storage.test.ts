import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { HeadObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GcsObjectStorage } from "./gcs";
import { LocalObjectStorage } from "./local";
import { verifyLocalDownload } from "./local-signed-url";
import { ObjectNotFoundError, ObjectTooLargeError, type ObjectStorage } from "./object-storage";
import { S3ObjectStorage, s3ClientConfig } from "./s3";
import { startLocalS3, type LocalS3 } from "@/test/support/s3-server";

const MiB = 1024 * 1024;
const PUT = { contentType: "application/octet-stream", maxBytes: 32 * MiB };

/** A stream of `size` deterministic bytes, in 64 KiB chunks. */
function bytesOf(size: number, seed = 1): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}
function chunked(data: Buffer, chunk = 64 * 1024): Readable {
  return Readable.from((function* () {
    for (let i = 0; i < data.length; i += chunk) yield data.subarray(i, i + chunk);
  })());
}
/** Sends `data` and then fails, like a client whose connection drops. */
function droppedAfter(data: Buffer): Readable {
  return Readable.from((async function* () {
    yield* (function* () {
      for (let i = 0; i < data.length; i += 64 * 1024) yield data.subarray(i, i + 64 * 1024);
    })();
    throw new Error("connection reset by peer");
  })());
}

/** Behaviour every provider must share. */
function providerContract(name: string, storage: () => ObjectStorage, exists: (key: string) => Promise<boolean>) {
  describe(`${name}: shared object-storage behaviour`, () => {
    it("round-trips bytes and deletes idempotently", async () => {
      const data = bytesOf(300_000);
      await storage().putStream("documents/org_acme/doc_1/v1", chunked(data), PUT);
      const got = await storage().get("documents/org_acme/doc_1/v1");
      expect(got.size).toBe(data.length);
      expect((await buffer(got.body)).equals(data)).toBe(true);
      await storage().delete("documents/org_acme/doc_1/v1");
      await storage().delete("documents/org_acme/doc_1/v1");
      await expect(storage().get("documents/org_acme/doc_1/v1")).rejects.toBeInstanceOf(ObjectNotFoundError);
    });

    it("fails an oversized body while streaming and leaves no object", async () => {
      await expect(storage().putStream("documents/org_acme/doc_2/v1", chunked(bytesOf(2 * MiB)), { ...PUT, maxBytes: MiB })).rejects.toBeInstanceOf(ObjectTooLargeError);
      expect(await exists("documents/org_acme/doc_2/v1")).toBe(false);
    });

    it("leaves no object when the body fails halfway", async () => {
      await expect(storage().putStream("documents/org_acme/doc_3/v1", droppedAfter(bytesOf(MiB)), PUT)).rejects.toThrow(/connection reset/);
      expect(await exists("documents/org_acme/doc_3/v1")).toBe(false);
    });

    it("leaves no object when the write is aborted", async () => {
      const controller = new AbortController();
      const slow = Readable.from((async function* () {
        yield bytesOf(100_000);
        controller.abort();
        await new Promise((r) => setTimeout(r, 50));
        yield bytesOf(100_000);
      })());
      await expect(storage().putStream("documents/org_acme/doc_4/v1", slow, { ...PUT, signal: controller.signal })).rejects.toThrow();
      expect(await exists("documents/org_acme/doc_4/v1")).toBe(false);
    });

    it("lists the complete objects under a folder, with their size and time, and nothing outside it", async () => {
      const before = Date.now() - 60_000;
      await storage().putStream("listing/org_a/one", chunked(bytesOf(10)), PUT);
      await storage().putStream("listing/org_a/deep/two", chunked(bytesOf(20)), PUT);
      await storage().putStream("listing/org_b/three", chunked(bytesOf(30)), PUT);
      await storage().putStream("listing-other/org_a/four", chunked(bytesOf(40)), PUT);
      // A write in flight is no object yet.
      const controller = new AbortController();
      const writing = storage().putStream("listing/org_a/unfinished", Readable.from((async function* () {
        yield bytesOf(100);
        await new Promise((resolve) => setTimeout(resolve, 60_000));
      })()), { ...PUT, signal: controller.signal }).catch(() => undefined);
      const listed = async (prefix: string) => {
        const out: { key: string; size: number }[] = [];
        for await (const object of storage().list(prefix)) {
          expect(object.lastModified.getTime()).toBeGreaterThan(before);
          out.push({ key: object.key, size: object.size });
        }
        return out.sort((a, b) => a.key.localeCompare(b.key));
      };
      expect(await listed("listing/")).toEqual([
        { key: "listing/org_a/deep/two", size: 20 },
        { key: "listing/org_a/one", size: 10 },
        { key: "listing/org_b/three", size: 30 },
      ]);
      expect(await listed("listing/org_a/")).toEqual([{ key: "listing/org_a/deep/two", size: 20 }, { key: "listing/org_a/one", size: 10 }]);
      expect(await listed("listing/none/")).toEqual([]);
      controller.abort();
      await writing;
      for (const key of ["listing/org_a/one", "listing/org_a/deep/two", "listing/org_b/three", "listing-other/org_a/four"]) await storage().delete(key);
      expect(await listed("listing/")).toEqual([]);
    });

    it("refuses listing prefixes that are no safe folder", async () => {
      for (const prefix of ["listing", "../", "a//", "/abs/", ""]) {
        await expect((async () => {
          for await (const object of storage().list(prefix)) void object;
        })()).rejects.toThrow(/Unsafe storage key|folder ending/);
      }
    });

    it("refuses keys that could escape", async () => {
      for (const key of ["../x", "documents/../../etc/passwd", "/abs", "a//b", "a\\b"]) {
        await expect(storage().putStream(key, chunked(bytesOf(10)), PUT)).rejects.toThrow(/Unsafe storage key|escapes/);
      }
    });
  });
}

describe("local provider", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-objects-"));
  const local = new LocalObjectStorage(root, "documents/");
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  providerContract("local", () => local, async (key) => fs.existsSync(path.join(root, key)));

  it("keeps no temporary files after failures", async () => {
    await expect(local.putStream("documents/org_acme/doc_9/v1", droppedAfter(bytesOf(200_000)), PUT)).rejects.toThrow();
    expect(fs.readdirSync(path.join(root, ".tmp"))).toEqual([]);
  });

  it("signs download URLs bound to key, organization and expiry", async () => {
    const url = new URL(await local.signedDownloadUrl("documents/org_acme/doc_1/v1", { filename: "Résumé ../x.pdf", contentType: "application/pdf", expiresInSeconds: 60, appOrigin: "http://app.test" }));
    expect(url.origin + url.pathname).toBe("http://app.test/api/v1/documents/signed-file");
    const query = Object.fromEntries(url.searchParams);
    const ok = verifyLocalDownload(query, "documents/");
    expect(ok).toMatchObject({ ok: true, grant: { key: "documents/org_acme/doc_1/v1", orgId: "org_acme", filename: "Résumé ../x.pdf" } });
    expect(verifyLocalDownload({ ...query, key: "documents/org_acme/doc_2/v1" }, "documents/")).toEqual({ ok: false, reason: "invalid" });
    expect(verifyLocalDownload({ ...query, org: "org_globex" }, "documents/")).toEqual({ ok: false, reason: "invalid" });
    // One character changed, whatever it was (replacing the last two with "AA" left one signature in 4,096 unchanged).
    const tampered = (query.sig[0] === "A" ? "B" : "A") + query.sig.slice(1);
    expect(verifyLocalDownload({ ...query, sig: tampered }, "documents/")).toEqual({ ok: false, reason: "invalid" });
    expect(verifyLocalDownload(query, "documents/", Date.now() + 61_000)).toEqual({ ok: false, reason: "expired" });
    expect(verifyLocalDownload({ key: "x" }, "documents/")).toEqual({ ok: false, reason: "invalid" });
  });
});

describe("s3 provider against a real S3-compatible server (s3rver)", () => {
  let s3: LocalS3;
  let storage: S3ObjectStorage;
  let client: S3Client;
  const settings = () => ({ access_key_id: s3.accessKeyId, secret_access_key: s3.secretAccessKey, region: "us-east-1", endpoint_url: s3.endpoint });

  beforeAll(async () => {
    s3 = await startLocalS3();
    storage = new S3ObjectStorage(s3.bucket, settings());
    client = new S3Client(s3ClientConfig(settings()));
  });
  afterAll(async () => {
    client?.destroy();
    await s3?.close();
  });

  const exists = async (key: string) => {
    try {
      await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }));
      return true;
    } catch {
      return false;
    }
  };
  providerContract("s3", () => storage, exists);

  it("uploads in several parts and serves the bytes at a presigned URL over HTTP", async () => {
    const data = bytesOf(9 * MiB + 123, 7);
    await storage.putStream("documents/org_acme/doc_big/v1", chunked(data), { contentType: "application/pdf", maxBytes: 32 * MiB });
    const url = await storage.signedDownloadUrl("documents/org_acme/doc_big/v1", { filename: "Résumé.pdf", contentType: "application/pdf", expiresInSeconds: 60, appOrigin: "http://unused" });
    expect(url).toContain("X-Amz-Expires=60");
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    expect(crypto.createHash("sha256").update(body).digest("hex")).toBe(crypto.createHash("sha256").update(data).digest("hex"));
    expect(res.headers.get("content-disposition")).toContain("filename*=UTF-8''R%C3%A9sum%C3%A9.pdf");
  });

  it("presigns inline URLs that the server answers with an inline Content-Disposition", async () => {
    await storage.putStream("documents/org_acme/doc_inline/v1", chunked(bytesOf(1000, 3)), { contentType: "application/pdf", maxBytes: MiB });
    const url = await storage.signedDownloadUrl("documents/org_acme/doc_inline/v1", { filename: "a.pdf", contentType: "application/pdf", expiresInSeconds: 60, appOrigin: "http://unused", disposition: "inline" });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toMatch(/^inline; filename="a.pdf"/);
    await res.arrayBuffer();
  });

  it("aborts a multipart upload whose body fails after the first part: nothing visible", async () => {
    await expect(storage.putStream("documents/org_acme/doc_half/v1", droppedAfter(bytesOf(9 * MiB)), PUT)).rejects.toThrow(/connection reset/);
    const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: "documents/org_acme/doc_half/" }));
    expect(listed.KeyCount ?? 0).toBe(0);
  });

  it("uses path-style addressing only with an endpoint, and the default credential chain without keys", () => {
    expect(s3ClientConfig({ region: "eu-west-1" })).toEqual({ region: "eu-west-1", credentials: undefined });
    expect(s3ClientConfig(settings())).toMatchObject({ endpoint: s3.endpoint, forcePathStyle: true });
  });
});

describe("gcs provider (no GCS server offline: signing only)", () => {
  it("creates V4 signed URLs locally from a service-account key file", async () => {
    const { privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
    const keyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "quarry-gcs-")), "key.json");
    fs.writeFileSync(keyFile, JSON.stringify({
      type: "service_account",
      project_id: "quarry-test",
      client_email: "quarry@quarry-test.iam.gserviceaccount.com",
      private_key: privateKey.export({ type: "pkcs8", format: "pem" }),
    }));
    const storage = new GcsObjectStorage("quarry-bucket", { use_workload_identity: false, key_file: keyFile });
    const url = new URL(await storage.signedDownloadUrl("documents/org_acme/doc_1/v1", { filename: "a.pdf", contentType: "application/pdf", expiresInSeconds: 300, appOrigin: "" }));
    expect(url.host).toBe("storage.googleapis.com");
    expect(url.pathname).toBe("/quarry-bucket/documents/org_acme/doc_1/v1");
    expect(url.searchParams.get("X-Goog-Algorithm")).toBe("GOOG4-RSA-SHA256");
    expect(url.searchParams.get("X-Goog-Expires")).toBe("300");
    expect(url.searchParams.get("response-content-disposition")).toContain("attachment");
  });
});
