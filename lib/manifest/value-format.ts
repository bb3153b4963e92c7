import { z } from "zod";

/**
 * How a column's numbers are shown, declared once where the column is defined (a dataset's
 * dimension or metric, a catalog KPI's metric) and used by every widget that shows it: KPI tiles,
 * tables, grids and chart tooltips (lib/dashboards/format.ts `formatValue`). A tile and a table of
 * the same metric therefore read the same ("$311,191.67" in both), whatever each widget says.
 * Written `format: currency` or `format: { type: currency, currency: EUR, decimals: 0 }`.
 */
export const ValueFormatType = z.enum(["currency", "percent", "number"]);
export type ValueFormatType = z.infer<typeof ValueFormatType>;

const ValueFormatObject = z.strictObject({
  type: ValueFormatType.describe("currency: money (USD unless `currency`); percent: percentage points (35.2 → 35.2%); number: grouped digits"),
  currency: z.string().regex(/^[A-Z]{3}$/, "must be an ISO 4217 code such as USD").optional().describe("ISO 4217 code for type currency; USD when omitted"),
  decimals: z.int().min(0).max(6).optional().describe("fraction digits, always shown; by default 2 for currency, 1 for percent, up to 2 for number"),
});

export const ValueFormat = z
  .union([ValueFormatType, ValueFormatObject])
  .describe("how this column's numbers are shown everywhere: currency, percent or number, or an object with type, currency and decimals");
export type ValueFormat = z.infer<typeof ValueFormat>;

/** The declared format with its defaults filled in. */
export interface ResolvedFormat {
  type: ValueFormatType;
  currency?: string;
  decimals?: number;
}

export function resolveFormat(format: ValueFormat): ResolvedFormat {
  return typeof format === "string" ? { type: format } : format;
}
