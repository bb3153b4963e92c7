import { z } from "zod";
import { defineEndpoint } from "./endpoint";

export const openApiDocument = defineEndpoint({
  method: "get",
  path: "/openapi.json",
  summary: "This OpenAPI 3.1 document",
  tags: ["Meta"],
  access: "public",
  response: z.record(z.string(), z.unknown()),
});
