import "server-only";
import crypto from "node:crypto";
import { getDb } from "@/lib/db/client";
import { deriveKey } from "@/lib/secrets";

/**
 * The links of invitations and password resets: 256 random bits in base64url (43 characters), shown
 * once in the link; a row keeps only an HMAC-SHA-256 under a key derived for this purpose, so a copy of
 * the database opens no link. Guessing one is hopeless (2^256), and every look-up is by the whole hash.
 */
export function newLinkToken(): { token: string; hash: Buffer } {
  const token = crypto.randomBytes(32).toString("base64url");
  return { token, hash: linkTokenHash(token) };
}

export function linkTokenHash(token: string): Buffer {
  return crypto.createHmac("sha256", deriveKey("member-links")).update(token, "utf8").digest();
}

export type LinkTable = "member_invitations" | "password_resets";

/**
 * Which organization a link belongs to, looked up before any tenant is known (as an API key's is,
 * lib/auth/directory.ts): the organization id only; everything else is read under that organization's
 * row-level security. null for a token no row has.
 */
export async function organizationOfLink(table: LinkTable, token: string): Promise<string | null> {
  const { system } = await getDb();
  const rows = await system.query<{ org_id: string }>(`SELECT org_id FROM ${table} WHERE token_hash = decode($1, 'hex')`, [linkTokenHash(token).toString("hex")]);
  return rows[0]?.org_id ?? null;
}
