import "server-only";
import crypto from "node:crypto";
import { deriveKey } from "@/lib/secrets";

/**
 * An organization API key as its holder sees it: `qk_<public id>_<secret>`, where the public id is 24 hex
 * digits (the row's id is `apk_<public id>`) and the secret 32 random bytes in base64url. The prefix makes
 * keys recognisable to people and to secret scanners, and lets the bearer check tell a key from a JWT.
 */
export const API_KEY_PREFIX = "qk_";
const KEY_PATTERN = /^qk_([0-9a-f]{24})_([A-Za-z0-9_-]{43})$/;

export const isApiKeyToken = (token: string) => token.startsWith(API_KEY_PREFIX);

/** The row id a presented key names, or null when it is not shaped like a key. */
export function apiKeyIdOf(token: string): string | null {
  const match = KEY_PATTERN.exec(token);
  return match ? `apk_${match[1]}` : null;
}

/** A new key: its row id, the key shown once, and what is stored of it. */
export function newApiKey(): { id: string; key: string; hash: Buffer } {
  const publicId = crypto.randomBytes(12).toString("hex");
  const key = `${API_KEY_PREFIX}${publicId}_${crypto.randomBytes(32).toString("base64url")}`;
  return { id: `apk_${publicId}`, key, hash: hashApiKey(key) };
}

/** The keyed hash stored for a key: HMAC-SHA-256 under a key derived from the application secret for this purpose alone. */
function hashApiKey(key: string): Buffer {
  return crypto.createHmac("sha256", deriveKey("api-keys")).update(key, "utf8").digest();
}

/** Whether `key` is the key whose hash is `stored`, in constant time. */
export function apiKeyMatches(key: string, stored: Buffer): boolean {
  const presented = hashApiKey(key);
  return stored.length === presented.length && crypto.timingSafeEqual(presented, stored);
}

/** How a key is shown after creation: its prefix and public id, never the secret. */
export const displayPrefix = (id: string) => `${API_KEY_PREFIX}${id.replace(/^apk_/, "")}_`;
