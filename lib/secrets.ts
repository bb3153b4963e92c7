import "server-only";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { config } from "@/lib/config";
import { processSingleton } from "@/lib/process-singleton";

/**
 * The application secret: QUARRY_SECRET, or in the embedded default a random
 * one generated once and kept in QUARRY_DATA_DIR so sessions survive restarts.
 */
export const appSecretSingleton = processSingleton("appSecret", readOrCreateSecret);

export const appSecret = (): Buffer => appSecretSingleton.get();

function readOrCreateSecret(): Buffer {
  const cfg = config();
  let secret = cfg.secret;
  if (!secret) {
    const file = path.join(cfg.dataDir, "secret.key");
    fs.mkdirSync(cfg.dataDir, { recursive: true });
    try {
      fs.writeFileSync(file, crypto.randomBytes(32).toString("base64url"), { flag: "wx", mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    secret = fs.readFileSync(file, "utf8").trim();
  }
  return Buffer.from(secret);
}

/** A key for one purpose (sessions, embed tokens, download URLs, secrets at rest), derived with HKDF so purposes never share a key. */
export function deriveKey(purpose: string, length = 32): Buffer {
  return Buffer.from(crypto.hkdfSync("sha256", appSecret(), Buffer.alloc(0), `quarry:${purpose}`, length));
}
