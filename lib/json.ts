/** JSON-ready value: Dates as ISO 8601 UTC, bigints and Prisma decimals as numbers. */
export function toJsonValue(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "bigint") return Number(v);
    if (v && typeof v === "object" && "toNumber" in v && typeof (v as { toNumber: unknown }).toNumber === "function" && "d" in v) {
      return (v as { toNumber(): number }).toNumber();
    }
    return v;
  }));
}

/**
 * How deep JSON input may nest. Engine code walks values recursively (JSON.stringify of filter
 * values in cache keys, zod, React props), and a value nested some thousands deep overflows the
 * stack there: a RangeError, a 500. Inputs are a few levels deep (a filter value is a scalar or a
 * list), so 64 leaves ample room.
 */
export const MAX_JSON_DEPTH = 64;

/** JSON text nested deeper than allowed; the route wrapper answers 422. */
export class JsonTooDeep extends Error {
  constructor(readonly limit: number) {
    super(`JSON nested deeper than ${limit} levels`);
    this.name = "JsonTooDeep";
  }
}

/**
 * Whether JSON text opens more than `limit` arrays or objects inside one another. A linear scan
 * (no recursion, strings and their escapes skipped), run before JSON.parse builds anything.
 */
export function jsonDepthExceeds(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** JSON.parse for input from outside: refuses text nested past `limit` (JsonTooDeep); malformed text throws SyntaxError as JSON.parse does. */
export function parseJsonInput(text: string, limit = MAX_JSON_DEPTH): unknown {
  if (jsonDepthExceeds(text, limit)) throw new JsonTooDeep(limit);
  return JSON.parse(text) as unknown;
}
