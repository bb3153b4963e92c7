import { route } from "@/lib/api/route";
import { createApiKey, listApiKeys } from "@/lib/auth/api-keys-operations";

export const GET = route(listApiKeys);
export const POST = route(createApiKey);
