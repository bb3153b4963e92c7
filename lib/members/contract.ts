import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { Role } from "@/lib/access/roles";
import { MemberAttributes } from "@/lib/access/attributes";
import { pageOf, pageQuery } from "@/lib/pagination";

const tags = ["Members"];

/** What a new password must be: long enough to resist guessing, short enough that scrypt's input stays small. */
export const NewPassword = z.string().min(10, "At least 10 characters").max(200).describe("At least 10 characters");

const Email = z.string().trim().max(254).pipe(z.email("Not an e-mail address")).describe("The member's e-mail address, their sign-in name");

const LocationIds = z
  .array(z.string().min(1).max(200))
  .max(500)
  .refine((ids) => new Set(ids).size === ids.length, "Locations must not repeat")
  .describe("Locations of the organization the member sees; empty: every location");

/** A link token as a path or body carries it: 43 base64url characters (256 random bits). */
export const LinkToken = z.string().regex(/^[A-Za-z0-9_-]{43}$/, "Not a valid link").describe("The token of the link (never stored: only its SHA-256)");

export const MemberStatus = z.enum(["active", "deactivated"]);

export const MemberIdParams = z.object({ id: z.string().min(1).max(200).describe("Member id") });
export const InvitationIdParams = z.object({ id: z.string().min(1).max(200).describe("Invitation id (`inv_…`)") });

export const MemberSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    role: Role,
    location_ids: z.array(z.string()).describe("Empty: every location"),
    attributes: MemberAttributes,
    status: MemberStatus,
    last_sign_in_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: "Member" });
export const MemberList = pageOf(MemberSchema).meta({ id: "MemberList" });

export const UpdateMemberBody = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    role: Role.optional(),
    location_ids: LocationIds.optional(),
    attributes: MemberAttributes.optional().describe("Replaces the member's attributes (dataset field policies read them; docs/datasets.md)"),
    status: MemberStatus.optional().describe("`deactivated`: sign-in refused and every session ends; their dashboards and schedules keep naming them"),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, "Name at least one field to change")
  .meta({ id: "UpdateMember" });
export type UpdateMemberBody = z.output<typeof UpdateMemberBody>;

export const InviteBody = z
  .object({ email: Email, role: Role, location_ids: LocationIds.default([]) })
  .strict()
  .meta({ id: "InviteMember" });
export type InviteBody = z.output<typeof InviteBody>;

export const Delivery = z
  .enum(["sent", "demo_outbox", "failed"])
  .describe("How the e-mail went: `sent` through the organization's e-mail channel; `demo_outbox`: the organization has no e-mail channel of its own and the message is kept in the demo outbox; otherwise copy the link and hand it over yourself");

export const InvitationSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    role: Role,
    location_ids: z.array(z.string()),
    expires_at: z.iso.datetime(),
    created_by: z.string().nullable(),
    created_at: z.iso.datetime(),
    status: z.enum(["pending", "accepted", "revoked", "expired"]),
  })
  .meta({ id: "Invitation" });
export const InvitationList = pageOf(InvitationSchema).meta({ id: "InvitationList" });

export const SentLink = z.object({
  link: z.string().describe("The one-time link, shown in this answer only"),
  delivery: Delivery,
  delivery_detail: z.string(),
});

export const CreatedInvitation = InvitationSchema.extend(SentLink.shape).meta({ id: "CreatedInvitation" });

export const AcceptInvitationBody = z
  .object({ token: LinkToken, name: z.string().trim().min(1).max(200), password: NewPassword })
  .strict()
  .meta({ id: "AcceptInvitation" });

export const RequestPasswordResetBody = z.object({ email: Email }).strict().meta({ id: "RequestPasswordReset" });
export const CompletePasswordResetBody = z.object({ token: LinkToken, password: NewPassword }).strict().meta({ id: "CompletePasswordReset" });

export const listMembers = defineEndpoint({
  method: "get",
  path: "/api/v1/members",
  summary: "List the organization's members",
  description: "Every member with role, locations, status and last sign-in, by name. Admins of every location only.",
  tags,
  access: "admin",
  keyScope: "none",
  query: pageQuery,
  response: MemberList,
});

export const updateMember = defineEndpoint({
  method: "patch",
  path: "/api/v1/members/{id}",
  summary: "Change a member's name, role, locations or status",
  description:
    "A change of role, locations or status ends the member's sessions at once, on every replica. The last active admin cannot be demoted or deactivated (409). A member of another organization is not found (404).",
  tags,
  access: "admin",
  keyScope: "none",
  params: MemberIdParams,
  body: UpdateMemberBody,
  response: MemberSchema,
  errors: [404, 409],
});

export const deleteMember = defineEndpoint({
  method: "delete",
  path: "/api/v1/members/{id}",
  summary: "Delete a member",
  description:
    "Removes the member's account; what they made stays with the organization, naming their id. The last active admin cannot be deleted, nor yourself (409); a member who owns report schedules or alert rules is deactivated instead (409 says so).",
  tags,
  access: "admin",
  keyScope: "none",
  params: MemberIdParams,
  status: 204,
  errors: [404, 409],
});

export const resetMemberPassword = defineEndpoint({
  method: "post",
  path: "/api/v1/members/{id}/password-reset",
  summary: "Send a member a password reset link",
  description: "A single-use link valid for one hour, e-mailed through the organization's e-mail channel and answered once, to copy.",
  tags,
  access: "admin",
  keyScope: "none",
  params: MemberIdParams,
  response: SentLink.meta({ id: "SentPasswordReset" }),
  status: 201,
  errors: [404, 409],
  rateLimit: { limit: 30, windowSeconds: 60 },
});

export const listInvitations = defineEndpoint({
  method: "get",
  path: "/api/v1/members/invitations",
  summary: "List the organization's invitations",
  description: "Pending, accepted, revoked and expired invitations, newest first. Their links are never shown again.",
  tags,
  access: "admin",
  keyScope: "none",
  query: pageQuery,
  response: InvitationList,
});

export const inviteMember = defineEndpoint({
  method: "post",
  path: "/api/v1/members/invitations",
  summary: "Invite someone by e-mail",
  description:
    "Makes a single-use link valid for 7 days (only its hash is stored), e-mails it through the organization's e-mail channel and answers it once, to copy. Inviting an address again replaces its pending invitation. The answer is the same for every address, member of another organization or not; an address that is already a member here is refused (409).",
  tags,
  access: "admin",
  keyScope: "none",
  body: InviteBody,
  response: CreatedInvitation,
  status: 201,
  errors: [409],
  rateLimit: { limit: 30, windowSeconds: 60 },
});

export const revokeInvitation = defineEndpoint({
  method: "delete",
  path: "/api/v1/members/invitations/{id}",
  summary: "Revoke an invitation",
  description: "Its link stops working at once. An invitation of another organization is not found (404).",
  tags,
  access: "admin",
  keyScope: "none",
  params: InvitationIdParams,
  status: 204,
  errors: [404],
});

export const acceptInvitation = defineEndpoint({
  method: "post",
  path: "/api/v1/invitations/accept",
  summary: "Accept an invitation: set a name and password",
  description:
    "Creates the account the invitation names (its address, role and locations) and spends the link. A used, revoked or expired link answers 410; an unknown one 404. No sign-in.",
  tags: ["Invitations"],
  access: "public",
  credentials: "none",
  keyScope: "none",
  body: AcceptInvitationBody,
  response: z.object({ email: z.string(), organization: z.string() }).meta({ id: "AcceptedInvitation" }),
  status: 201,
  errors: [404, 409, 410],
  rateLimit: { limit: 10, windowSeconds: 60 },
});

export const requestPasswordReset = defineEndpoint({
  method: "post",
  path: "/api/v1/password-resets",
  summary: "Ask for a password reset link by e-mail",
  description: "Always answers 202 with the same text, whether the address has an account or not. No sign-in.",
  tags: ["Invitations"],
  access: "public",
  credentials: "none",
  keyScope: "none",
  body: RequestPasswordResetBody,
  response: z.object({ detail: z.string() }),
  status: 202,
  rateLimit: { limit: 5, windowSeconds: 60 },
});

export const completePasswordReset = defineEndpoint({
  method: "post",
  path: "/api/v1/password-resets/complete",
  summary: "Set a new password with a reset link",
  description: "Spends the link and ends every session of the account. A used or expired link answers 410; an unknown one 404. No sign-in.",
  tags: ["Invitations"],
  access: "public",
  credentials: "none",
  keyScope: "none",
  body: CompletePasswordResetBody,
  status: 204,
  errors: [404, 410],
  rateLimit: { limit: 10, windowSeconds: 60 },
});

export const SetupBody = z
  .object({
    organization_name: z.string().trim().min(1).max(200),
    slug: z
      .string()
      .trim()
      .regex(/^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$/, "Lower-case letters, digits and inner hyphens, at most 48")
      .describe("The organization's short name in links and tokens"),
    time_zone: z
      .string()
      .refine((tz) => {
        try {
          new Intl.DateTimeFormat("en", { timeZone: tz });
          return true;
        } catch {
          return false;
        }
      }, "Not an IANA time zone")
      .describe("IANA time zone, e.g. Europe/Berlin"),
    currency: z.string().regex(/^[A-Z]{3}$/, "An ISO 4217 code such as EUR").describe("ISO 4217 code"),
    admin_name: z.string().trim().min(1).max(200),
    admin_email: Email,
    admin_password: NewPassword,
  })
  .strict()
  .meta({ id: "Setup" });
export type SetupBody = z.output<typeof SetupBody>;

export const getSetup = defineEndpoint({
  method: "get",
  path: "/api/v1/setup",
  summary: "Whether this install still needs its first-run setup",
  description: "`open` is true only on an install without any organization.",
  tags: ["Setup"],
  access: "public",
  credentials: "none",
  keyScope: "none",
  response: z.object({ open: z.boolean() }),
});

export const runSetup = defineEndpoint({
  method: "post",
  path: "/api/v1/setup",
  summary: "First-run setup: the first organization and its admin",
  description:
    "Works once, on an install without any organization; two submissions at once on any replicas make one organization (the other answers 409), and every later one answers 409. No sign-in.",
  tags: ["Setup"],
  access: "public",
  credentials: "none",
  keyScope: "none",
  body: SetupBody,
  response: z.object({ organization: z.string(), admin_email: z.string() }).meta({ id: "SetupDone" }),
  status: 201,
  errors: [409],
  rateLimit: { limit: 10, windowSeconds: 60 },
});
