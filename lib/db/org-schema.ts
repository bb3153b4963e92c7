import { createHash } from "node:crypto";
import { ORG_SCHEMA_PREFIX } from "./warehouse";

/** 16 hex digits of a hash of the organization's id: names its schema and its reader role. */
const orgHash = (orgId: string): string => createHash("sha256").update("org-tables\0").update(orgId).digest("hex").slice(0, 16);

/**
 * The schema holding an organization's own tables: the prefix and 16 hex digits of a hash of its id
 * (as reader-login.ts names logins), so no organization id (any length, any character) reaches SQL
 * text, and one organization's schema name says nothing of another's. Apart from warehouse.ts, which the
 * browser's manifest check imports: node:crypto is the server's.
 */
export const orgTableSchema = (orgId: string): string => ORG_SCHEMA_PREFIX + orgHash(orgId);

/**
 * The role an organization's own tables are granted to, and nobody else (issue 42 §3): a member of
 * quarry_reader, so it reads the warehouse too. Reader work of the organization runs as it (withTenant,
 * through quarry_enter_tenant, which computes the same name: quarry_org_reader_role, migration 0048).
 */
export const orgReaderRole = (orgId: string): string => `quarry_reader_${orgHash(orgId)}`;
