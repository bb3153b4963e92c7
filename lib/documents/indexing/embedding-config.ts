import "server-only";
import type { Principal } from "@/lib/access/roles";
import { withTenant } from "@/lib/db/tenant";
import { embeddingStatus } from "@/lib/embeddings";
import { hasHnswIndex } from "./vector-indexes";

/**
 * The active embedding provider (never its key) and the caller's
 * organization's documents whose index needs redoing: indexed with another
 * model than the active one, or indexed before their file was replaced.
 */
export async function getEmbeddingConfig(principal: Principal) {
  const status = embeddingStatus();
  const [counts] = await withTenant(principal, (tx) =>
    tx.$queryRaw<{ indexed: number; model_changed: number; file_replaced: number; total: number }[]>`
      SELECT count(*)::int AS indexed,
             count(*) FILTER (WHERE index_model <> ${status.model})::int AS model_changed,
             count(*) FILTER (WHERE index_stale)::int AS file_replaced,
             count(*) FILTER (WHERE index_model <> ${status.model} OR index_stale)::int AS total
      FROM documents WHERE index_model IS NOT NULL`,
  );
  return {
    provider: status.provider,
    model: status.model,
    dims: status.dims,
    configured: status.configured,
    reason: status.reason,
    available_models: status.available_models,
    notice: status.notice,
    vector_index: hasHnswIndex(status.model, status.dims) ? ("hnsw" as const) : ("exact" as const),
    indexed_documents: counts.indexed,
    stale: { model_changed: counts.model_changed, file_replaced: counts.file_replaced, total: counts.total },
  };
}
