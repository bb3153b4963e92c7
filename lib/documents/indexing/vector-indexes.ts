import "server-only";
import pgvector from "pgvector";
import { Prisma } from "@/lib/db/generated/client";

/**
 * Models with a partial HNSW index in prisma/migrations/0008_document_chunks
 * (kept equal by vector-indexes.test.ts). HNSW indexes `vector` up to 2,000
 * dimensions; larger models are indexed as `halfvec`.
 */
export const HNSW_INDEXED_MODELS: Readonly<Record<string, { dims: number; type: "vector" | "halfvec" }>> = {
  "quarry-local-hash-v1": { dims: 384, type: "vector" },
  "text-embedding-3-small": { dims: 1536, type: "vector" },
  "text-embedding-3-large": { dims: 3072, type: "halfvec" },
  "text-embedding-005": { dims: 768, type: "vector" },
  "text-embedding-004": { dims: 768, type: "vector" },
  "text-multilingual-embedding-002": { dims: 768, type: "vector" },
  "voyage-3": { dims: 1024, type: "vector" },
  "voyage-3-lite": { dims: 512, type: "vector" },
  "voyage-code-3": { dims: 1024, type: "vector" },
};

/**
 * How one model's chunks are compared with a query vector. Index-backed
 * plans repeat the index's exact expression and predicate (the model as a
 * literal, taken from the table above, never from the request), so the
 * planner can use the partial index; other models fall back to an exact scan.
 */
export interface VectorPlan {
  strategy: "hnsw" | "exact";
  /** `c.embedding` as the index sees it. */
  column: Prisma.Sql;
  /** Cast appended to the query vector's text parameter. */
  cast: Prisma.Sql;
  /** Selects the model's chunks (the index predicate when there is one). */
  modelFilter: Prisma.Sql;
}

export function vectorPlan(model: string, dims: number, strategy: "auto" | "exact" = "auto"): VectorPlan {
  const indexed = Object.hasOwn(HNSW_INDEXED_MODELS, model) ? HNSW_INDEXED_MODELS[model] : undefined;
  if (strategy === "auto" && indexed && indexed.dims === dims) {
    const typed = `${indexed.type}(${indexed.dims})`;
    return {
      strategy: "hnsw",
      column: Prisma.raw(`c.embedding::${typed}`),
      cast: Prisma.raw(`::${typed}`),
      // The literal is one of HNSW_INDEXED_MODELS' keys; quote doubling keeps it a literal regardless.
      modelFilter: Prisma.sql`c.model = ${Prisma.raw(`'${model.replaceAll("'", "''")}'`)} AND c.dims = ${dims}`,
    };
  }
  return {
    strategy: "exact",
    column: Prisma.raw("c.embedding"),
    cast: Prisma.raw("::vector"),
    modelFilter: Prisma.sql`c.model = ${model} AND c.dims = ${dims}`,
  };
}

export function hasHnswIndex(model: string, dims: number): boolean {
  return Object.hasOwn(HNSW_INDEXED_MODELS, model) && HNSW_INDEXED_MODELS[model].dims === dims;
}

/**
 * pgvector's text form of a query vector, by the `pgvector` package; sent as a bound parameter,
 * never spliced into SQL. Stored vectors go in binary (chunk-copy.ts); a query sends one vector,
 * where text costs nothing measurable (bench/search.ts).
 */
export function vectorLiteral(values: readonly number[]): string {
  for (const v of values) if (!Number.isFinite(v)) throw new Error("embedding contains a non-finite value");
  return pgvector.toSql([...values]) as string;
}
