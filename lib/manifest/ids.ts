import { z } from "zod";

/** Widget, tab and dataset ids: referenced from tabs, filters, bindings and URLs. */
export const ManifestId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, "must be 1-64 letters, digits, '-' or '_', starting with a letter or digit")
  .describe("identifier, unique within the dashboard");

/** Dimension and metric ids double as formula identifiers, so they follow identifier rules. */
export const FieldId = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "must be an identifier: letters, digits and '_', not starting with a digit")
  .describe("dimension or metric id; also the name formulas use");
