/**
 * The `locations` claim of a token or session, read so that it fails closed: absent or `"*"`
 * (alone or as `["*"]`) is every location of the organization; a non-empty list of non-empty
 * strings is that scope. Anything else (`null`, `[]`, another string, a number, an object, a list
 * with non-strings or `"*"` beside ids) is malformed and the caller refuses the credential; an
 * empty list and `null` once meant "everything", which is exactly how a scope gets lost on the way
 * (an identity provider that writes `null` for "no locations" must not grant every location).
 */
export type LocationClaim = { ok: true; locationIds: string[] | null } | { ok: false; reason: string };

const LOCATION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export function readLocationClaim(value: unknown): LocationClaim {
  if (value === undefined || value === "*") return { ok: true, locationIds: null };
  if (value === null) return { ok: false, reason: "is null; omit it or use \"*\" for every location" };
  if (!Array.isArray(value)) return { ok: false, reason: "must be a list of location ids or \"*\"" };
  if (value.length === 1 && value[0] === "*") return { ok: true, locationIds: null };
  if (value.length === 0) return { ok: false, reason: "is an empty list; omit it or use \"*\" for every location" };
  if (!value.every((id) => typeof id === "string" && LOCATION_ID.test(id))) return { ok: false, reason: "must hold location ids only (\"*\" stands alone)" };
  return { ok: true, locationIds: [...new Set(value as string[])] };
}
