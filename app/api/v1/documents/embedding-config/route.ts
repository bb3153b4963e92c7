import { route } from "@/lib/api/route";
import { getEmbeddingConfig } from "@/lib/documents/operations";

export const GET = route(getEmbeddingConfig);
