import { route } from "@/lib/api/route";
import { getEmbeddingConfig } from "@/lib/documents/search-contract";
import { embeddingConfigFor } from "@/lib/documents/embedding-config";

export const GET = route(getEmbeddingConfig, ({ principal }) => embeddingConfigFor(principal));
