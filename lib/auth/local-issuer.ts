import "server-only";
import fs from "node:fs";
import path from "node:path";
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type CryptoKey } from "jose";
import { config } from "@/lib/config";
import type { Role } from "@/lib/access/roles";
import { processSingleton } from "@/lib/process-singleton";

const ALG = "ES256";

export interface KeyPair {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  kid: string;
}

export const issuerKeySingleton = processSingleton("localIssuerKey", loadOrCreate);

/** The embedded issuer's key file inside QUARRY_DATA_DIR. */
export const issuerKeyFile = (dataDir: string): string => path.join(dataDir, "issuer-key.json");

/**
 * The embedded default's identity provider: an ES256 key pair kept in
 * QUARRY_DATA_DIR, created by the server as it boots (lib/boot.ts), used by the API to
 * verify and by `npm run token` to sign (which only reads it: readIssuerKey).
 */
export const localIssuerKey = (): Promise<KeyPair> => issuerKeySingleton.get();

async function loadOrCreate(): Promise<KeyPair> {
  const file = issuerKeyFile(config().dataDir);
  if (!fs.existsSync(file)) {
    const { privateKey } = await generateKeyPair(ALG, { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: `local-${Date.now().toString(36)}`, alg: ALG };
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
      fs.writeFileSync(file, JSON.stringify(jwk), { flag: "wx", mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  return readIssuerKey(file);
}

/** Reads an existing key file (never creates one). */
export async function readIssuerKey(file: string): Promise<KeyPair> {
  const jwk = JSON.parse(fs.readFileSync(file, "utf8")) as JWK & { kid: string };
  const { d: _private, ...publicJwk } = jwk;
  return {
    privateKey: (await importJWK(jwk, ALG)) as CryptoKey,
    publicKey: (await importJWK(publicJwk, ALG)) as CryptoKey,
    kid: jwk.kid,
  };
}

export interface IssueTokenInput {
  userId: string;
  /** The member's e-mail, sent in the e-mail claim (a subject that is no user id names its member by it). */
  email?: string;
  orgSlug: string;
  role: Role;
  locationIds?: string[] | null;
  ttlSeconds?: number;
}

/** Signs a bearer token with the claims a production identity provider would send. */
export async function issueLocalToken(input: IssueTokenInput, key?: KeyPair): Promise<string> {
  const { privateKey, kid } = key ?? (await localIssuerKey());
  const { auth } = config();
  const claims: Record<string, unknown> = { [auth.claims.org]: input.orgSlug, [auth.claims.role]: input.role };
  if (input.locationIds && input.locationIds.length > 0) claims[auth.claims.locations] = input.locationIds;
  if (input.email) claims[auth.claims.email] = input.email;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: ALG, kid, typ: "JWT" })
    .setIssuer(auth.issuer)
    .setAudience(auth.audience)
    .setSubject(input.userId)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + (input.ttlSeconds ?? 3600))
    .sign(privateKey);
}
