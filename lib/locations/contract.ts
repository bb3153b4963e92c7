import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { pageOf, pageQuery } from "@/lib/pagination";

export const LocationSchema = z
  .object({
    id: z.string(),
    code: z.string().describe("Short code, unique in the organization"),
    name: z.string(),
    city: z.string(),
    region: z.string(),
    created_at: z.iso.datetime().describe("ISO 8601, UTC"),
    archived_at: z.iso.datetime().nullable().describe("Set when archived: the location keeps its data and leaves pickers"),
  })
  .meta({ id: "Location" });

export const LocationList = pageOf(LocationSchema).meta({ id: "LocationList" });

export const listLocations = defineEndpoint({
  method: "get",
  path: "/api/v1/locations",
  summary: "List locations visible to the caller",
  description: "The caller's organization's locations, narrowed to the token's location scope; by code.",
  tags: ["Locations"],
  access: "user",
  // What dashboards and documents keys see their filters and documents by.
  keyScope: ["dashboards:read", "documents:read"],
  query: pageQuery.extend({
    archived: z
      .enum(["true", "false"])
      .default("false")
      .transform((v) => v === "true")
      .describe("`true`: archived locations too"),
  }),
  response: LocationList,
});

const LocationCode = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/, "Letters, digits, '-' and '_', at most 32")
  .describe("Short code, unique in the organization (e.g. NYC)");
const LocationText = (what: string) => z.string().trim().max(200).describe(what);

export const CreateLocationBody = z
  .object({ code: LocationCode, name: LocationText("Display name").min(1), city: LocationText("City").default(""), region: LocationText("Region").default("") })
  .strict()
  .meta({ id: "CreateLocation" });
export type CreateLocationBody = z.output<typeof CreateLocationBody>;

export const UpdateLocationBody = z
  .object({
    code: LocationCode.optional(),
    name: LocationText("Display name").min(1).optional(),
    city: LocationText("City").optional(),
    region: LocationText("Region").optional(),
    archived: z.boolean().optional().describe("true: archive (kept with its data, left out of pickers and new grants); false: restore"),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, "Name at least one field to change")
  .meta({ id: "UpdateLocation" });
export type UpdateLocationBody = z.output<typeof UpdateLocationBody>;

export const LocationIdParams = z.object({ id: z.string().min(1).max(200).describe("Location id") });

export const createLocation = defineEndpoint({
  method: "post",
  path: "/api/v1/locations",
  summary: "Create a location",
  description: "Admins of every location only. A code already used in the organization answers 409.",
  tags: ["Locations"],
  access: "admin",
  keyScope: "none",
  body: CreateLocationBody,
  response: LocationSchema,
  status: 201,
  errors: [409],
});

export const updateLocation = defineEndpoint({
  method: "patch",
  path: "/api/v1/locations/{id}",
  summary: "Rename, recode, archive or restore a location",
  description:
    "Archiving keeps the location's orders, targets and members' scopes; it leaves pickers and cannot be granted anew. Admins of every location only; a location of another organization is not found (404).",
  tags: ["Locations"],
  access: "admin",
  keyScope: "none",
  params: LocationIdParams,
  body: UpdateLocationBody,
  response: LocationSchema,
  errors: [404, 409],
});
