import { SECRET_FIELDS } from "@/lib/notifications/channel-kinds";

/**
 * The one masking rule of the audit log. What is recorded is the target as the API shows it, which already leaves
 * out hashes and shows channel secrets masked; this rule is the floor under that: a field named as a secret by a
 * channel kind's schema (SECRET_FIELDS), or whose name ends in password, secret, token, hash or link (invitation
 * and reset links carry their token), is written as MASKED at any depth. Secrets' values never reach the table.
 */
export const MASKED = "[masked]";

const CHANNEL_SECRETS = new Set(Object.values(SECRET_FIELDS).flat());
const SECRET_NAME = /(?:^|_)(?:password|secret|token|hash|link)$/i;

export const isSecretField = (name: string) => CHANNEL_SECRETS.has(name) || SECRET_NAME.test(name);

/** A JSON copy of `value` with every secret field masked (null and undefined stay null). */
export function maskSecrets(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object") return value;
  if (value instanceof Uint8Array) return MASKED;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, isSecretField(k) && v !== null ? MASKED : maskSecrets(v)]),
  );
}
