import { z } from "zod";
import type { ApiKeyScope } from "./api-key-scopes";

export const Role = z.enum(["admin", "general_manager", "analyst"]);
export type Role = z.infer<typeof Role>;

/** Who is calling, resolved the same way from a bearer token and from a browser session. */
export interface Principal {
  userId: string;
  orgId: string;
  orgSlug: string;
  orgName: string;
  role: Role;
  /** null: every location of the organization. */
  locationIds: string[] | null;
  via: "bearer" | "session" | "api_key";
  /**
   * An organization API key's scopes (via "api_key"): the key acts as an admin capped by them
   * (`authorize`, lib/operation.ts); its `userId` is the key's id.
   */
  scopes?: readonly ApiKeyScope[];
}

/** Who may call an endpoint: anyone, any signed-in user, or a set of roles. */
export type Access = "public" | "user" | "admin" | readonly Role[];

export function allows(access: Access, role: Role): boolean {
  if (access === "public" || access === "user") return true;
  if (access === "admin") return role === "admin";
  return access.includes(role);
}

/**
 * An admin of every location: who administers people, places and the audit log. A location-scoped admin could
 * otherwise grant locations beyond their own scope, or read changes made outside it.
 */
export function isOrganizationAdmin(principal: Principal): boolean {
  return principal.role === "admin" && principal.locationIds === null;
}
