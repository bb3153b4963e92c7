import { z } from "zod";

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
  via: "bearer" | "session";
}

/** Who may call an endpoint: anyone, any signed-in user, or a set of roles. */
export type Access = "public" | "user" | "admin" | readonly Role[];

export function allows(access: Access, role: Role): boolean {
  if (access === "public" || access === "user") return true;
  if (access === "admin") return role === "admin";
  return access.includes(role);
}
