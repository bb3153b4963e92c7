import crypto from "node:crypto";

// Async: scrypt runs on the libuv pool, so a sign-in (~70 ms of hashing) no longer stalls every other request.
function scrypt(password: string, salt: Buffer, keylen: number): Promise<Buffer> {
  return new Promise((resolve, reject) => crypto.scrypt(password, salt, keylen, (error, key) => (error ? reject(error) : resolve(key))));
}

/** scrypt with a random salt, stored as `scrypt$<salt>$<hash>` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const hash = await scrypt(password, salt, 32);
  return `scrypt$${salt.toString("base64url")}$${hash.toString("base64url")}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const actual = await scrypt(password, Buffer.from(salt, "base64url"), expected.length);
  return crypto.timingSafeEqual(actual, expected);
}

/**
 * Checked against when the email is unknown, so an unknown account costs the same
 * scrypt as a known one and answer times do not reveal which emails exist.
 * (The hash of a random password nobody knows; same parameters as real hashes.)
 */
const DUMMY_HASH = "scrypt$xEABd8rPNQ5FdsjyRx1W9g$NUzHiNyhkjl0mAID0kwP3hRkUTWpqvwUjUDrwCb4YKM";

export async function verifyAgainstDummy(password: string): Promise<false> {
  await verifyPassword(password, DUMMY_HASH);
  return false;
}
