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
  query: pageQuery,
  response: LocationList,
});
