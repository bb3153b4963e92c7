import { z } from "zod";

/**
 * Member attributes (issue 48 §4): what a dataset's field policy may ask of a viewer besides a role, e.g.
 * `{ region: [eu] }`. Kept on the member (users.attributes, migration 0052, edited through /api/v1/members)
 * and signed into embed tokens; the manifest's `access.attributes` names them with the same rule.
 */
export const AttributeName = z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, "an attribute name: a lowercase letter, then lowercase letters, digits or _ (at most 40)");

export const AttributeValues = z.array(z.string().min(1).max(200)).min(1).max(100);

export const MemberAttributes = z
  .record(AttributeName, AttributeValues)
  .refine((attributes) => Object.keys(attributes).length <= 20, "At most 20 attributes")
  .describe("Attribute name -> the values the member holds, e.g. { \"region\": [\"eu\"] }; dataset field policies may ask for them");
export type MemberAttributes = z.infer<typeof MemberAttributes>;

/** A stored attributes value as the policy reads it: anything not of the shape counts as no attributes (fail closed). */
export function readAttributes(stored: unknown): MemberAttributes {
  const parsed = MemberAttributes.safeParse(stored);
  return parsed.success ? parsed.data : {};
}
