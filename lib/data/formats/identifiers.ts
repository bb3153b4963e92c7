/** PostgreSQL's limit on an identifier, in bytes; longer names are truncated by the server. */
const MAX_IDENTIFIER_BYTES = 63;

/**
 * Names a loaded table's own columns may not take: PostgreSQL's system columns (CREATE TABLE refuses
 * them) and the tenancy column every organization table carries.
 */
export const RESERVED_COLUMN_NAMES: ReadonlySet<string> = new Set(["org_id", "ctid", "xmin", "xmax", "cmin", "cmax", "tableoid", "oid"]);

/**
 * A header as a plain lower-case SQL identifier that needs no quoting: letters (accents dropped),
 * digits and underscores, starting with a letter or underscore, at most 63 bytes; `column` when
 * nothing is left. "Unit Price (€)" → `unit_price`, "2024 Sales" → `c_2024_sales`.
 */
export function columnIdentifier(header: string): string {
  const ascii = header
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  const name = ascii === "" ? "column" : /^[0-9]/.test(ascii) ? `c_${ascii}` : ascii;
  return name.slice(0, MAX_IDENTIFIER_BYTES).replace(/_+$/, "");
}

/**
 * Each header's identifier, unique among them and apart from `taken` (the reserved names by
 * default): a collision gets `_2`, `_3`, … (shortened to stay within 63 bytes).
 */
export function columnIdentifiers(headers: readonly string[], taken: Iterable<string> = RESERVED_COLUMN_NAMES): string[] {
  const used = new Set(taken);
  return headers.map((header) => {
    const base = columnIdentifier(header);
    let name = base;
    for (let n = 2; used.has(name); n++) {
      const suffix = `_${n}`;
      name = `${base.slice(0, MAX_IDENTIFIER_BYTES - suffix.length)}${suffix}`;
    }
    used.add(name);
    return name;
  });
}
