import { describe, expect, it } from "vitest";
import { DEFAULT_DOCUMENT_MAX_BYTES, loadDocumentStorageConfig } from "./storage";

const load = (env: Record<string, string | undefined>) => loadDocumentStorageConfig(env, "/data");

describe("document storage configuration", () => {
  it("defaults to the local provider under QUARRY_DATA_DIR/objects with a 50 MiB limit", () => {
    expect(load({})).toEqual({
      storage: { provider: "local", prefix: "documents/" },
      localDir: "/data/objects",
      maxBytes: DEFAULT_DOCUMENT_MAX_BYTES,
      downloadUrlTtlSeconds: 300,
    });
    expect(load({ DOCUMENT_STORAGE_CONFIG: "  " }).storage.provider).toBe("local");
  });

  it("parses s3 with keys, region and endpoint, and without keys (IAM role)", () => {
    const s3 = load({ DOCUMENT_STORAGE_CONFIG: JSON.stringify({ provider: "s3", bucket: "b", prefix: "/team/docs", s3: { access_key_id: "AK", secret_access_key: "SK", region: "eu-west-1", endpoint_url: "http://127.0.0.1:9000" } }) });
    expect(s3.storage).toEqual({ provider: "s3", bucket: "b", prefix: "team/docs/", s3: { access_key_id: "AK", secret_access_key: "SK", region: "eu-west-1", endpoint_url: "http://127.0.0.1:9000" } });
    expect(load({ DOCUMENT_STORAGE_CONFIG: '{"provider":"s3","bucket":"b"}' }).storage).toEqual({ provider: "s3", bucket: "b", prefix: "documents/", s3: { region: "us-east-1" } });
  });

  it("parses gcs with workload identity or a key file", () => {
    expect(load({ DOCUMENT_STORAGE_CONFIG: '{"provider":"gcs","bucket":"b","prefix":"","gcs":{"use_workload_identity":true}}' }).storage).toEqual({ provider: "gcs", bucket: "b", prefix: "", gcs: { use_workload_identity: true } });
    expect(() => load({ DOCUMENT_STORAGE_CONFIG: '{"provider":"gcs","bucket":"b","gcs":{}}' })).toThrow(/DOCUMENT_STORAGE_CONFIG\.gcs: set use_workload_identity/);
  });

  it("fails naming the variable and the field", () => {
    expect(() => load({ DOCUMENT_STORAGE_CONFIG: "{provider: s3}" })).toThrow(/DOCUMENT_STORAGE_CONFIG is not valid JSON/);
    expect(() => load({ DOCUMENT_STORAGE_CONFIG: '{"provider":"azure","bucket":"b"}' })).toThrow(/DOCUMENT_STORAGE_CONFIG\.provider: Invalid discriminator value/);
    expect(() => load({ DOCUMENT_STORAGE_CONFIG: '{"provider":"s3"}' })).toThrow(/DOCUMENT_STORAGE_CONFIG\.bucket/);
    expect(() => load({ DOCUMENT_STORAGE_CONFIG: '{"provider":"s3","bucket":"b","s3":{"access_key_id":"AK"}}' })).toThrow(/DOCUMENT_STORAGE_CONFIG\.s3: access_key_id and secret_access_key/);
    expect(() => load({ DOCUMENT_STORAGE_CONFIG: '{"provider":"s3","bucket":"b","s3":{"endpoint_url":"not a url"}}' })).toThrow(/DOCUMENT_STORAGE_CONFIG\.s3\.endpoint_url/);
    expect(() => load({ DOCUMENT_STORAGE_CONFIG: '{"provider":"local","prefix":"../up"}' })).toThrow(/DOCUMENT_STORAGE_CONFIG\.prefix/);
    expect(() => load({ DOCUMENT_MAX_BYTES: "lots" })).toThrow(/DOCUMENT_MAX_BYTES/);
  });
});
