import { openApiDocument } from "@/lib/api/contract";
import { buildOpenApi } from "@/lib/api/openapi";
import { route } from "@/lib/api/route";
import { config } from "@/lib/config";

export const GET = route(openApiDocument, async () => buildOpenApi({ production: config().publicUrl, staging: config().stagingUrl }));
