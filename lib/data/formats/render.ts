import { dataSourceError } from "./types";

/**
 * A typed value (JSON, Parquet, XLSX) as the text a CSV would hold: numbers in JavaScript's shortest
 * exact form, booleans as true/false, bigints in full, objects and arrays as JSON; null and undefined
 * are null. A JSON integer beyond 2^53 was already rounded by the parser: refused rather than loaded
 * wrong (quote it as a string).
 */
export function renderValue(value: unknown, row?: number): string | null {
  switch (typeof value) {
    case "string":
      return value === "" ? null : value;
    case "number":
      if (!Number.isFinite(value)) return String(value);
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        throw dataSourceError("syntax", `the number ${value} is beyond the exact range of JSON numbers (2^53): write it as a string`, row);
      }
      return String(value);
    case "bigint":
      return value.toString();
    case "boolean":
      return value ? "true" : "false";
    case "undefined":
      return null;
    default:
      return value === null ? null : JSON.stringify(value, (_key, inner: unknown) => (typeof inner === "bigint" ? inner.toString() : inner));
  }
}
