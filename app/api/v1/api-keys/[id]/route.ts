import { route } from "@/lib/api/route";
import { revokeApiKey } from "@/lib/auth/api-keys-operations";

export const DELETE = route(revokeApiKey);
