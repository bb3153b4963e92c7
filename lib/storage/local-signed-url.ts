import "server-only";
import crypto from "node:crypto";
import { deriveKey } from "@/lib/secrets";
import type { Disposition } from "./object-storage";

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
  disposition: Disposition;
}

function signature(grant: LocalDownloadGrant): string {
  // "inline" is signed only when asked for, so attachment URLs keep the v1 form.
  const fields = ["v1", grant.key, grant.orgId, grant.filename, grant.contentType, String(grant.expires)];
  if (grant.disposition === "inline") fields.push("inline");
  const payload = fields.join("\n");
  return crypto.createHmac("sha256", deriveKey("document-download")).update(payload).digest("base64url");
}

/** The query string of a signed local download URL; every field is covered by the HMAC. */
export function signLocalDownload(grant: LocalDownloadGrant): URLSearchParams {
  const query = new URLSearchParams({
    key: grant.key,
    org: grant.orgId,
    name: grant.filename,
    type: grant.contentType,
    expires: String(grant.expires),
  });
  if (grant.disposition === "inline") query.set("disposition", "inline");
  query.set("sig", signature(grant));
  return query;
}

export type LocalDownloadCheck = { ok: true; grant: LocalDownloadGrant } | { ok: false; reason: "invalid" | "expired" };

/** Checks signature, expiry and that the key lies in the organization's folder. */
export function verifyLocalDownload(query: Record<string, string | undefined>, keyPrefix: string, now = Date.now()): LocalDownloadCheck {
  const { key, org, name, type, expires, sig, disposition = "attachment" } = query;
  if (!key || !org || !name || !type || !expires || !sig || !/^\d+$/.test(expires)) return { ok: false, reason: "invalid" };
  if (disposition !== "attachment" && disposition !== "inline") return { ok: false, reason: "invalid" };
  const grant: LocalDownloadGrant = { key, orgId: org, filename: name, contentType: type, expires: Number(expires), disposition };
  const expected = Buffer.from(signature(grant));
  const given = Buffer.from(sig);
  if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) return { ok: false, reason: "invalid" };
  if (!key.startsWith(`${keyPrefix}${org}/`)) return { ok: false, reason: "invalid" };
  if (grant.expires * 1000 < now) return { ok: false, reason: "expired" };
  return { ok: true, grant };
}
