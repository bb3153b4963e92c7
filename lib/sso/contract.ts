import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { Role } from "@/lib/access/roles";

const tags = ["Single sign-on"];

/** An e-mail domain as the admin declares it: lower-case letters, digits, hyphens and dots, at least two labels. */
const Domain = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "Not a domain name (e.g. example.com)");

const LocationIds = z
  .array(z.string().min(1).max(200))
  .max(500)
  .refine((ids) => new Set(ids).size === ids.length, "Locations must not repeat")
  .describe("Locations the mapped members see; empty: every location");

export const RoleMapping = z
  .object({
    value: z.string().trim().min(1).max(200).describe("A value of the role claim (e.g. a group name) that grants this mapping"),
    role: Role,
    location_ids: LocationIds.default([]),
  })
  .strict()
  .meta({ id: "SsoRoleMapping" });
export type RoleMapping = z.output<typeof RoleMapping>;

const settingsFields = {
  issuer_url: z
    .url({ protocol: /^https?$/ })
    .max(500)
    .describe("The provider's issuer; its discovery document is read from `<issuer>/.well-known/openid-configuration`. https, and a public address unless NOTIFICATIONS_CONFIG.url_allow_list names the host"),
  client_id: z.string().trim().min(1).max(500),
  domains: z
    .array(Domain)
    .min(1, "Name at least one e-mail domain")
    .max(50)
    .refine((d) => new Set(d).size === d.length, "Domains must not repeat")
    .describe("E-mail domains whose addresses sign in through this provider; accounts are made just in time for these domains only. A domain belongs to one organization of the install"),
  role_claim: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_.:/-]{1,100}$/, "A claim name")
    .default("groups")
    .describe("The ID token claim (a string or a list of strings) matched against the mappings' values"),
  role_mappings: z.array(RoleMapping).max(200).default([]).describe("At every sign-in the highest role among the matching mappings wins, with the union of that role's mappings' locations"),
  default_role: Role.nullable().default(null).describe("The role of a member whose claim matches no mapping (every location); null refuses such a sign-in"),
  sso_only: z.boolean().default(false).describe("Password sign-in is refused for the organization's members, except the break-glass admins"),
  break_glass_user_ids: z
    .array(z.string().min(1).max(200))
    .max(20)
    .default([])
    .describe("Admins of every location who keep their password sign-in when `sso_only` is on (at least one is required then)"),
  enabled: z.boolean().default(true),
};

export const SaveSsoSettingsBody = z
  .object({
    ...settingsFields,
    client_secret: z.string().min(1).max(2000).optional().describe("Required the first time; omit it to keep the stored one. Never answered back"),
  })
  .strict()
  .meta({ id: "SaveSsoSettings" });
export type SaveSsoSettingsBody = z.output<typeof SaveSsoSettingsBody>;

export const SsoSettings = z
  .object({
    issuer_url: z.string(),
    client_id: z.string(),
    client_secret_set: z.literal(true).describe("The secret is stored (sealed); it is never shown"),
    domains: z.array(z.string()),
    role_claim: z.string(),
    role_mappings: z.array(RoleMapping),
    default_role: Role.nullable(),
    sso_only: z.boolean(),
    break_glass_user_ids: z.array(z.string()),
    enabled: z.boolean(),
    provider_id: z.string().describe("next-auth's provider id: the sign-in redirect goes to `/api/auth/signin/<provider_id>`"),
    redirect_uri: z.string().describe("The redirect URI to register with the provider"),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: "SsoSettings" });
export type SsoSettings = z.output<typeof SsoSettings>;

export const getSsoSettings = defineEndpoint({
  method: "get",
  path: "/api/v1/sso",
  summary: "Read the organization's single sign-on settings",
  description: "The client secret is never answered, only that it is set. 404 when SSO is not configured. Admins of every location only.",
  tags,
  access: "admin",
  keyScope: "none",
  response: SsoSettings,
  errors: [404],
});

export const saveSsoSettings = defineEndpoint({
  method: "put",
  path: "/api/v1/sso",
  summary: "Configure single sign-on with OpenID Connect",
  description:
    "Checks the issuer against the outbound-address rules (as webhooks), reads its discovery document and requires its `issuer` to be the one given (422 otherwise). A domain another organization holds, a location of another organization, or a break-glass member who is not an active admin of every location answers 422.",
  tags,
  access: "admin",
  keyScope: "none",
  body: SaveSsoSettingsBody,
  response: SsoSettings,
  errors: [422],
  rateLimit: { limit: 20, windowSeconds: 60 },
});

export const deleteSsoSettings = defineEndpoint({
  method: "delete",
  path: "/api/v1/sso",
  summary: "Remove single sign-on",
  description: "Members sign in with their passwords again (members made just in time set one through a password reset).",
  tags,
  access: "admin",
  keyScope: "none",
  status: 204,
  errors: [404],
});

export const DiscoverBody = z
  .object({ email_or_organization: z.string().trim().min(1).max(254).describe("An e-mail address (its domain) or an organization's slug") })
  .strict()
  .meta({ id: "DiscoverSso" });

export const discoverSso = defineEndpoint({
  method: "post",
  path: "/api/v1/sso/discover",
  summary: "Find the single sign-on provider for an e-mail address or organization",
  description:
    "Answers the next-auth provider to sign in with. The answer depends on the address's domain or the slug only, never on whether an account exists; without a provider it is 404 with the same words for every input.",
  tags,
  access: "public",
  credentials: "none",
  keyScope: "none",
  body: DiscoverBody,
  response: z.object({ provider_id: z.string(), organization_name: z.string() }).meta({ id: "DiscoveredSso" }),
  errors: [404],
  rateLimit: { limit: 30, windowSeconds: 60 },
});
