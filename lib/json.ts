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
