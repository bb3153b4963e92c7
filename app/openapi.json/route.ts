import { route } from "@/lib/api/route";
import { openApiDocument } from "@/lib/api/operations";

export const GET = route(openApiDocument);
