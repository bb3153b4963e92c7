import "server-only";
import crypto from "node:crypto";
import { deriveKey } from "@/lib/secrets";

const PURPOSE = "notification-secrets";
const VERSION = "v1";

/** The associated data a channel's secrets are sealed with: its organization and kind. */
export const secretsBinding = (orgId: string, kind: string) => `${orgId}:${kind}`;

/**
 * Seals channel secrets (JSON) with AES-256-GCM. The organization and channel
 * kind are bound in as associated data, so a sealed value copied to another
 * row does not open.
 */
export function sealSecrets(secrets: Record<string, string>, binding: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", deriveKey(PURPOSE), iv);
  cipher.setAAD(Buffer.from(binding));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(secrets), "utf8"), cipher.final()]);
  return [VERSION, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), ciphertext.toString("base64url")].join(".");
}

export function openSecrets(sealed: string, binding: string): Record<string, string> {
  const [version, iv, tag, ciphertext] = sealed.split(".");
  if (version !== VERSION || !iv || !tag || !ciphertext) throw new Error("Unrecognized sealed secret format");
  const decipher = crypto.createDecipheriv("aes-256-gcm", deriveKey(PURPOSE), Buffer.from(iv, "base64url"));
  decipher.setAAD(Buffer.from(binding));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]);
  return JSON.parse(plain.toString("utf8")) as Record<string, string>;
}

/** What a response shows instead of a secret: that it is set, and its last four characters at most. */
export function maskSecret(value: string): string {
  return value.length >= 12 ? `****${value.slice(-4)}` : "****";
}
