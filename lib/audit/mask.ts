/**
 * The one masking rule of the audit log. What is recorded is the target as the API shows it, which already leaves
 * out hashes and shows channel secrets masked; this rule is the floor under that: a field whose name ends in
 * password, secret, token, hash or link (invitation and reset links carry their token), or that the recording
 * domain names as a secret of its schema (a channel kind's SECRET_FIELDS, such as a Slack webhook URL), is written
 * as MASKED at any depth. Secrets' values never reach the table.
 */
export const MASKED = "[masked]";

const SECRET_NAME = /(?:^|_)(?:password|secret|token|hash|link)$/i;

/** A JSON copy of `value` with every secret field masked (undefined and null become null). */
export function maskSecrets(value: unknown, secretFields: ReadonlySet<string> = new Set()): unknown {
  const mask = (v: unknown): unknown => {
    if (v === undefined || v === null) return null;
    if (v instanceof Date) return v.toISOString();
    if (Array.isArray(v)) return v.map(mask);
    if (typeof v === "bigint") return v.toString();
    if (typeof v !== "object") return v;
    if (v instanceof Uint8Array) return MASKED;
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .filter(([, field]) => field !== undefined)
        .map(([name, field]) => [name, (SECRET_NAME.test(name) || secretFields.has(name)) && field !== null ? MASKED : mask(field)]),
    );
  };
  return mask(value);
}
