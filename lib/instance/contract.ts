import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { SetupBody } from "@/lib/members/contract";
import { pageOf, pageQuery } from "@/lib/pagination";

const tags = ["Instance"];

export const InstanceOrganization = z
  .object({
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    time_zone: z.string(),
    currency: z.string(),
    members: z.number().int().describe("Members of every status"),
    created_at: z.iso.datetime(),
  })
  .meta({ id: "InstanceOrganization" });
export const InstanceOrganizationList = pageOf(InstanceOrganization).meta({ id: "InstanceOrganizationList" });

/** The setup form's rules (lib/members/contract.ts), without a password: the first admin sets theirs through the link. */
export const CreateOrganizationBody = SetupBody.pick({ organization_name: true, slug: true, time_zone: true, currency: true, admin_email: true })
  .strict()
  .meta({ id: "CreateOrganization" });
export type CreateOrganizationBody = z.output<typeof CreateOrganizationBody>;

export const CreatedOrganization = z
  .object({
    organization: InstanceOrganization,
    admin_email: z.string(),
    link: z.string().describe("The first admin's one-time invitation link, shown in this answer only"),
    created: z.boolean().describe("false: the slug named an organization without members yet, which gets a new link (the last one stops working)"),
  })
  .meta({ id: "CreatedOrganization" });

export const listInstanceOrganizations = defineEndpoint({
  method: "get",
  path: "/api/v1/instance/organizations",
  summary: "List the install's organizations",
  description: "Every organization of this install, oldest first, with its member count. Instance admins only (granted by `quarry instance-admin grant`); anyone else 403.",
  tags,
  access: "user",
  keyScope: "none",
  query: pageQuery,
  response: InstanceOrganizationList,
  errors: [403],
});

export const createInstanceOrganization = defineEndpoint({
  method: "post",
  path: "/api/v1/instance/organizations",
  summary: "Make an organization with a link for its first admin",
  description:
    "Makes the organization and a single-use invitation link (7 days) for its first admin, answered once, as `quarry init` prints it. A slug of an organization that has no member yet gets a new link; one with members answers 409. Instance admins only; anyone else 403.",
  tags,
  access: "user",
  keyScope: "none",
  body: CreateOrganizationBody,
  response: CreatedOrganization,
  status: 201,
  errors: [403, 409],
  rateLimit: { limit: 30, windowSeconds: 60 },
});
