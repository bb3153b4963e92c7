import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { MAX_IMAGE_ORIGINS, normalizeImageOrigin } from "@/lib/security/image-origins";

const tags = ["Organization"];

const ImageOrigin = z
  .string()
  .max(300)
  .transform((text, ctx) => {
    const origin = normalizeImageOrigin(text);
    if (origin === null) {
      ctx.addIssue({
        code: "custom",
        message:
          "must be a public https origin such as https://images.example.com (a host, an optional port, an optional leading *. for subdomains; no path; not localhost, .local, .internal or a private, loopback or link-local address)",
      });
      return z.NEVER;
    }
    return origin;
  })
  .describe("A public origin images may load from: https://host with an optional :port and leading *.; no internal host or address");

export const OrganizationSettingsBody = z
  .object({
    image_origins: z
      .array(ImageOrigin)
      .max(MAX_IMAGE_ORIGINS)
      .describe("Origins the organization's dashboard images may load from, besides this app's own origin and data: URLs; replaces the list"),
    index_on_upload: z.boolean().optional().describe("Whether uploading a file queues its indexing (default true); omitted keeps the stored value"),
    report_allowed_domains: z
      .array(
        z
          .string()
          .trim()
          .toLowerCase()
          .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "must be a domain name such as example.com"),
      )
      .max(50)
      .optional()
      .describe("E-mail domains scheduled reports may be sent to beyond the organization's users (none by default); omitted keeps the stored list"),
  })
  .meta({ id: "OrganizationSettingsInput" });
export type OrganizationSettingsBody = z.output<typeof OrganizationSettingsBody>;

export const OrganizationSettings = z
  .object({
    image_origins: z.array(z.string()).describe("Origins dashboard images may load from, besides this app's own origin and data: URLs"),
    index_on_upload: z.boolean().describe("Whether uploading a file queues its indexing; an upload's ?index=true|false overrides it"),
    report_allowed_domains: z.array(z.string()).describe("E-mail domains scheduled reports may be sent to beyond the organization's users"),
    updated_at: z.iso.datetime().nullable().describe("ISO 8601, UTC; null until first saved"),
  })
  .meta({ id: "OrganizationSettings" });

export const getOrganizationSettings = defineEndpoint({
  method: "get",
  path: "/api/v1/organization/settings",
  summary: "The organization's settings",
  description: "Image origins: where images of the organization's dashboards (signed-in, embedded and public pages) may load from, enforced by the pages' Content-Security-Policy.",
  tags,
  access: "admin",
  response: OrganizationSettings,
});

export const putOrganizationSettings = defineEndpoint({
  method: "put",
  path: "/api/v1/organization/settings",
  summary: "Set the organization's settings",
  description:
    "Replaces the image origins. Pages of the organization then load images only from this app's origin, data: URLs and these origins; an image widget naming another host shows nothing. Other replicas apply a change within a few seconds.",
  tags,
  access: "admin",
  body: OrganizationSettingsBody,
  response: OrganizationSettings,
});
