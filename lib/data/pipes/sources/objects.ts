import "server-only";
import http from "node:http";
import https from "node:https";
import type { Readable } from "node:stream";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Storage } from "@google-cloud/storage";
import { s3ClientConfig } from "@/lib/storage/s3";
import { assertSafeUrl, pinnedLookup, type PinnedTarget } from "@/lib/notifications/transports/url-guard";
import { PullFailed } from "../errors";

/** Where a file a pull loads lives, with what reaches it (opened from the pull's sealed secrets). */
export type ObjectSourceSpec =
  | { kind: "s3"; bucket: string; key: string; region: string; endpointUrl?: string; accessKeyId?: string; secretAccessKey?: string }
  | { kind: "gcs"; bucket: string; key: string; credentialsJson: string }
  | { kind: "https"; url: string; authorization?: string };

/** The outbound check of webhooks, as a pull's failure (the admin reads why). */
async function checkedUrl(raw: string): Promise<{ url: URL; target: PinnedTarget }> {
  try {
    return await assertSafeUrl(raw);
  } catch (error) {
    throw new PullFailed(`${raw.startsWith("http") ? new URL(raw).host : "The URL"}: ${(error as Error).message}`);
  }
}

/**
 * The object's bytes as a stream (never held whole): S3 (or an S3-compatible server, whose endpoint passes the
 * outbound rules and is connected to at the address checked) through lib/storage's client configuration, GCS
 * through its client with the organization's service-account key, or an HTTPS URL under the outbound rules
 * (redirects refused: the next host would not have been checked). `signal` aborts the read.
 */
export async function openObject(spec: ObjectSourceSpec, signal: AbortSignal): Promise<Readable> {
  if (spec.kind === "s3") {
    const pinned = spec.endpointUrl ? (await checkedUrl(spec.endpointUrl)).target : null;
    const settings = { region: spec.region, endpoint_url: spec.endpointUrl, access_key_id: spec.accessKeyId, secret_access_key: spec.secretAccessKey };
    const agents = pinned ? { httpAgent: new http.Agent({ lookup: pinnedLookup(pinned) }), httpsAgent: new https.Agent({ lookup: pinnedLookup(pinned) }) } : {};
    const client = new S3Client({ ...s3ClientConfig(settings), ...(pinned ? { requestHandler: agents } : {}) });
    try {
      const object = await client.send(new GetObjectCommand({ Bucket: spec.bucket, Key: spec.key }), { abortSignal: signal });
      const body = object.Body as Readable;
      body.once("close", () => client.destroy());
      return body;
    } catch (error) {
      client.destroy();
      throw new PullFailed(`s3://${spec.bucket}/${spec.key}: ${(error as { name?: string }).name === "NoSuchKey" ? "no such object" : (error as Error).message}`);
    }
  }
  if (spec.kind === "gcs") {
    let credentials: Record<string, string>;
    try {
      credentials = JSON.parse(spec.credentialsJson) as Record<string, string>;
    } catch {
      throw new PullFailed("The GCS service-account key is not JSON");
    }
    const file = new Storage({ credentials, projectId: credentials.project_id }).bucket(spec.bucket).file(spec.key);
    const stream = file.createReadStream({ validation: false });
    signal.addEventListener("abort", () => stream.destroy(signal.reason as Error), { once: true });
    return stream;
  }
  const { url, target } = await checkedUrl(spec.url);
  return new Promise<Readable>((resolve, reject) => {
    const req = https.request(url, { method: "GET", headers: spec.authorization ? { authorization: spec.authorization } : {}, lookup: pinnedLookup(target), signal, agent: false }, (res) => {
      const status = res.statusCode ?? 0;
      if (status !== 200) {
        res.resume();
        reject(new PullFailed(`${url.host} answered ${status}${status >= 300 && status < 400 ? " (a redirect; pulls follow none: name the final URL)" : ""}`));
        return;
      }
      resolve(res);
    });
    req.on("error", (error) => reject(new PullFailed(`${url.host}: ${error.message}`)));
    req.end();
  });
}
