import "server-only";
import crypto from "node:crypto";
import { deriveKey } from "@/lib/auth/secrets";

/** Path of the app route that serves local objects to holders of a signed URL. */
export const LOCAL_SIGNED_FILE_PATH = "/api/v1/documents/signed-file";

export interface LocalDownloadGrant {
  key: string;
  /** The organization the object belongs to; the key must live under its folder. */
  orgId: string;
  filename: string;
  contentType: string;
  /** Unix seconds. */
  expires: number;
}

function signature(grant: LocalDownloadGrant): string {
  const payload = ["v1", grant.key, grant.orgId, grant.filename, grant.contentType, String(grant.expires)].join("\n");
  return crypto.createHmac("sha256", deriveKey("document-download")).update(payload).digest("base64url");
}

/** The query string of a signed local download URL; every field is covered by the HMAC. */
export function signLocalDownload(grant: LocalDownloadGrant): URLSearchParams {
  return new URLSearchParams({
    key: grant.key,
    org: grant.orgId,
    name: grant.filename,
    type: grant.contentType,
    expires: String(grant.expires),
    sig: signature(grant),
  });
}

export type LocalDownloadCheck = { ok: true; grant: LocalDownloadGrant } | { ok: false; reason: "invalid" | "expired" };

/** Checks signature, expiry and that the key lies in the organization's folder. */
export function verifyLocalDownload(query: Record<string, string | undefined>, keyPrefix: string, now = Date.now()): LocalDownloadCheck {
  const { key, org, name, type, expires, sig } = query;
  if (!key || !org || !name || !type || !expires || !sig || !/^\d+$/.test(expires)) return { ok: false, reason: "invalid" };
  const grant: LocalDownloadGrant = { key, orgId: org, filename: name, contentType: type, expires: Number(expires) };
  const expected = Buffer.from(signature(grant));
  const given = Buffer.from(sig);
  if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) return { ok: false, reason: "invalid" };
  if (!key.startsWith(`${keyPrefix}${org}/`)) return { ok: false, reason: "invalid" };
  if (grant.expires * 1000 < now) return { ok: false, reason: "expired" };
  return { ok: true, grant };
}
