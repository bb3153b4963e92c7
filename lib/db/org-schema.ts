import { createHash } from "node:crypto";
import { ORG_SCHEMA_PREFIX } from "./warehouse";

/**
 * The schema holding an organization's own tables: the prefix and 16 hex digits of a hash of its id
 * (as reader-login.ts names logins), so no organization id (any length, any character) reaches SQL
 * text, and one organization's schema name says nothing of another's. Apart from warehouse.ts, which the
 * browser's manifest check imports: node:crypto is the server's.
 */
export const orgTableSchema = (orgId: string): string => ORG_SCHEMA_PREFIX + createHash("sha256").update("org-tables\0").update(orgId).digest("hex").slice(0, 16);
