import crypto from "node:crypto";
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, tokenFor } from "@/test/helpers";
import { docxFile, pdfFile } from "@/test/support/document-files";
import { s3ClientConfig } from "@/lib/storage/s3";
import { startLocalS3, type LocalS3 } from "@/test/support/s3-server";
import * as collection from "./route";
import * as one from "./[id]/route";
import * as upload from "./[id]/upload/route";
import * as download from "./[id]/download/route";

const sha256 = (b: Buffer | Uint8Array) => crypto.createHash("sha256").update(b).digest("hex");

// The same routes with DOCUMENT_STORAGE_CONFIG pointing at a real S3-compatible server.
describe("documents API on the s3 provider (s3rver)", () => {
  let s3: LocalS3;
  let client: S3Client;
  let admin: string;
  let globex: string;

  beforeAll(async () => {
    s3 = await startLocalS3("quarry-docs");
    const settings = { access_key_id: s3.accessKeyId, secret_access_key: s3.secretAccessKey, region: "us-east-1", endpoint_url: s3.endpoint };
    // Read at first use, like at server start.
    process.env.DOCUMENT_STORAGE_CONFIG = JSON.stringify({ provider: "s3", bucket: s3.bucket, prefix: "tenants", s3: settings });
    client = new S3Client(s3ClientConfig(settings));
    [admin, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("globex", "admin")]);
  });
  afterAll(async () => {
    client?.destroy();
    await s3?.close();
  });

  const keysOf = async (id: string) =>
    ((await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `tenants/org_acme/${id}/` }))).Contents ?? []).map((o) => o.Key);
  const put = (id: string, data: Buffer | ReadableStream<Uint8Array>, token = admin) =>
    call(upload.POST, "POST", `/api/v1/documents/${id}/upload`, { token, params: { id }, rawBody: Buffer.isBuffer(data) ? new Uint8Array(data) : data, headers: { "content-type": "application/octet-stream" } });

  it("uploads, serves a presigned URL that returns the same bytes, replaces and deletes", async () => {
    const pdf = await pdfFile();
    const id = (await call(collection.POST, "POST", "/api/v1/documents", { token: admin, body: { filename: "Bericht Ü.pdf" } })).json.id as string;
    const res = await put(id, pdf);
    expect(res.status, res.text).toBe(200);
    expect(res.json.checksum_sha256).toBe(sha256(pdf));
    const [firstKey] = await keysOf(id);
    expect(firstKey).toMatch(new RegExp(`^tenants/org_acme/${id}/[0-9a-z]+-[0-9a-f]{12}$`));

    const link = await call(download.GET, "GET", `/api/v1/documents/${id}/download`, { token: admin, params: { id } });
    expect(link.json.url).toContain(`${s3.endpoint}/quarry-docs/tenants/org_acme/${id}/`);
    const fetched = await fetch(link.json.url);
    expect(fetched.status).toBe(200);
    expect(sha256(new Uint8Array(await fetched.arrayBuffer()))).toBe(sha256(pdf));
    expect(fetched.headers.get("content-disposition")).toContain("filename*=UTF-8''Bericht%20%C3%9C.pdf");
    expect((await call(download.GET, "GET", `/api/v1/documents/${id}/download`, { token: globex, params: { id } })).status).toBe(404);

    // A lying replacement and a dropped connection change nothing.
    expect((await put(id, await docxFile())).status).toBe(415);
    let pulls = 0;
    const dropping = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (++pulls > 2) controller.error(new Error("socket hang up"));
        else controller.enqueue(new Uint8Array(pdf));
      },
    });
    expect((await put(id, dropping)).status).toBe(400);
    expect(await keysOf(id)).toEqual([firstKey]);

    const replaced = await put(id, Buffer.concat([pdf, Buffer.from("\n% appended\n")]));
    expect(replaced.status).toBe(200);
    const keys = await keysOf(id);
    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toBe(firstKey);

    expect((await call(one.DELETE, "DELETE", `/api/v1/documents/${id}`, { token: admin, params: { id } })).status).toBe(204);
    expect(await keysOf(id)).toEqual([]);
  });
});
