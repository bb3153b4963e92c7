import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { Prisma } from "@/lib/db/generated/client";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { BUILT_IN_MODELS, LOCAL_EMBEDDING_MODEL } from "@/lib/config/embedding-models";
import { searchChunks, searchTenantChunks, type ChunkSearch } from "../search/search";
import { HNSW_INDEXED_MODELS, vectorLiteral, vectorPlan } from "./vector-indexes";

const ACME = { orgId: "org_acme" };
const DOC = "doc_vector_index_test";
/** A pseudo-random value per (row g, coordinate k), the same in SQL and JS up to rounding. */
const HASH_SQL = Prisma.raw("(sin(g * 12.9898 + k * 78.233) * 43758.5453) - floor(sin(g * 12.9898 + k * 78.233) * 43758.5453) - 0.5");
const hashValue = (g: number, k: number) => {
  const x = Math.sin(g * 12.9898 + k * 78.233) * 43758.5453;
  return x - Math.floor(x) - 0.5;
};

/** A transaction whose raw queries are explained instead of run: the plans searchChunks gets. */
function explaining(tx: TenantTx, plans: string[]): TenantTx {
  return new Proxy(tx, {
    get(target, property, receiver) {
      if (property !== "$queryRaw") return Reflect.get(target, property, receiver);
      return async (strings: TemplateStringsArray, ...values: unknown[]) => {
        const sql = Prisma.sql(strings, ...values);
        const rows = await target.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(`EXPLAIN ${sql.text}`, ...sql.values);
        plans.push(rows.map((r) => r["QUERY PLAN"]).join("\n"));
        return [];
      };
    },
  });
}

async function planOf(search: Omit<ChunkSearch, "vector" | "queryText">): Promise<string> {
  const plans: string[] = [];
  const vector = Array.from({ length: search.dims }, (_, i) => Math.sin(i + 1));
  await withTenant(ACME, (tx) => searchChunks(explaining(tx, plans), { ...search, vector, queryText: "quarterly revenue" }));
  return plans.join("\n");
}

describe("per-model vector indexes", () => {
  it("the API's raw search path gives the hits the Prisma path gives, for its own organization only", async () => {
    const vector = Array.from({ length: 384 }, (_, k) => hashValue(734, k + 1));
    for (const mode of ["vector", "hybrid"] as const) {
      for (const strategy of ["auto", "exact"] as const) {
        const search: ChunkSearch = { vector, model: LOCAL_EMBEDDING_MODEL, dims: 384, topK: 5, documentIds: null, mode, queryText: "chunk 734", strategy };
        const viaPrisma = await withTenant(ACME, (tx) => searchChunks(tx, search));
        const viaRaw = await searchTenantChunks(ACME, search);
        expect(viaPrisma.length).toBeGreaterThan(0);
        expect(viaRaw).toEqual(viaPrisma);
        expect(await searchTenantChunks({ orgId: "org_globex" }, search)).toEqual([]);
        expect(await searchTenantChunks(ACME, { ...search, documentIds: ["doc_elsewhere"] })).toEqual([]);
      }
    }
  });

  it("prepares the index search once per connection, plans it no more, and each organization still sees only its own chunks", async () => {
    const vector = Array.from({ length: 384 }, (_, k) => hashValue(734, k + 1));
    const GLOBEX = { orgId: "org_globex" };
    // The same vectors in another organization: a plan that carried one tenant's rows to the next would show here.
    await withTenant(GLOBEX, async (tx) => {
      await tx.$executeRaw`INSERT INTO documents (id, org_id, title, filename, content_type, extension, created_by, status, index_generation, index_model, index_dims, chunk_count)
        VALUES ('doc_vector_index_globex', 'org_globex', 'Vectors', 'vectors.txt', 'text/plain', 'txt', 'usr_globex_admin', 'indexed', 1, ${LOCAL_EMBEDDING_MODEL}, 384, 50)`;
      await tx.$executeRaw`INSERT INTO document_chunks (org_id, document_id, generation, ordinal, text, word_start, word_end, model, dims, embedding)
        SELECT 'org_globex', 'doc_vector_index_globex', 1, g, 'chunk ' || g, g * 450, g * 450 + 500, ${LOCAL_EMBEDDING_MODEL}, 384,
               array(SELECT ${HASH_SQL} FROM generate_series(1, 384) k)::vector
        FROM generate_series(710, 759) g`;
    });
    try {
      for (const mode of ["vector", "hybrid"] as const) {
        const search: ChunkSearch = { vector, model: LOCAL_EMBEDDING_MODEL, dims: 384, topK: 3, documentIds: null, mode, queryText: "chunk 734" };
        const expected = await withTenant(ACME, (tx) => searchChunks(tx, search));
        // PostgreSQL plans a prepared statement afresh five times before it settles on a generic plan.
        for (let i = 0; i < 8; i++) {
          expect(await searchTenantChunks(ACME, search)).toEqual(expected);
          const theirs = await searchTenantChunks(GLOBEX, search);
          expect(theirs.map((hit) => [hit.document_id, hit.ordinal])[0]).toEqual(["doc_vector_index_globex", 734]);
          expect(theirs.every((hit) => hit.document_id === "doc_vector_index_globex")).toBe(true);
        }
      }
      // Searches one after another reuse the pool's most recently released connection, the one asked here.
      const prepared = await (await getDb()).system.query<{ generic_plans: number }>(
        "SELECT generic_plans::int AS generic_plans FROM pg_prepared_statements WHERE name LIKE 'quarry\\_%' AND statement LIKE '%document_chunks%'",
      );
      expect(prepared).toHaveLength(2);
      for (const statement of prepared) expect(statement.generic_plans).toBeGreaterThan(0);
    } finally {
      await withTenant(GLOBEX, (tx) => tx.$executeRaw`DELETE FROM documents WHERE id = 'doc_vector_index_globex'`);
    }
  });

  beforeAll(async () => {
    // Enough rows of the local model that a sequential scan is not the cheap plan.
    await withTenant(ACME, async (tx) => {
      await tx.$executeRaw`INSERT INTO documents (id, org_id, title, filename, content_type, extension, created_by, status, index_generation, index_model, index_dims, chunk_count)
        VALUES (${DOC}, 'org_acme', 'Vectors', 'vectors.txt', 'text/plain', 'txt', 'usr_acme_admin', 'indexed', 1, ${LOCAL_EMBEDDING_MODEL}, 384, 1000)`;
      await tx.$executeRaw`INSERT INTO document_chunks (org_id, document_id, generation, ordinal, text, word_start, word_end, model, dims, embedding)
        SELECT 'org_acme', ${DOC}, 1, g, 'chunk ' || g, g * 450, g * 450 + 500, ${LOCAL_EMBEDDING_MODEL}, 384,
               array(SELECT ${HASH_SQL} FROM generate_series(1, 384) k)::vector
        FROM generate_series(0, 999) g`;
      // A thousand vectors into the HNSW index took 39 s on a loaded 2-core runner: past the 30 s a request's transaction gets.
    }, { timeoutMs: 110_000 });
    await (await getDb()).system.exec("ANALYZE document_chunks; ANALYZE documents");
  });

  it("matches the migration: one partial HNSW index per listed model, same dimension and type", async () => {
    const rows = await (await getDb()).system.query<{ indexdef: string }>(
      "SELECT indexdef FROM pg_indexes WHERE tablename = 'document_chunks' AND indexdef ILIKE '%USING hnsw%'",
    );
    const found = rows.map((r) => {
      const m = /\(\(embedding\)::(vector|halfvec)\((\d+)\)\) (vector|halfvec)_cosine_ops\) WHERE \(model = '([^']+)'::text\)/.exec(r.indexdef);
      if (!m) throw new Error(`unexpected index definition: ${r.indexdef}`);
      return [m[4], { dims: Number(m[2]), type: m[1] }] as const;
    });
    expect(Object.fromEntries(found)).toEqual(HNSW_INDEXED_MODELS);
  });

  it("covers every built-in model with its catalogue dimension (halfvec above 2,000)", () => {
    for (const model of BUILT_IN_MODELS) {
      expect(HNSW_INDEXED_MODELS[model.model], model.model).toEqual({ dims: model.dims, type: model.dims > 2000 ? "halfvec" : "vector" });
    }
  });

  it("plans searches on the model's HNSW index, in both modes, with document filters", async () => {
    const base = { model: LOCAL_EMBEDDING_MODEL, dims: 384, topK: 5, documentIds: null, mode: "vector" as const };
    expect(await planOf(base)).toMatch(/Index Scan using document_chunks_hnsw_quarry_local_hash_v1/);
    expect(await planOf({ ...base, documentIds: [DOC, "doc_other"] })).toMatch(/Index Scan using document_chunks_hnsw_quarry_local_hash_v1/);
    expect(await planOf({ ...base, mode: "hybrid" })).toMatch(/Index Scan using document_chunks_hnsw_quarry_local_hash_v1/);
    const exact = await planOf({ ...base, strategy: "exact" });
    expect(exact).not.toMatch(/hnsw/);
    expect(exact).toMatch(/Seq Scan on document_chunks/);
    expect(await planOf({ ...base, mode: "hybrid", strategy: "exact" })).not.toMatch(/hnsw/);
  });

  it("finds the same nearest chunk through the index as by exact scan", async () => {
    const vector = Array.from({ length: 384 }, (_, i) => hashValue(734, i + 1));
    const search = { vector, queryText: "", model: LOCAL_EMBEDDING_MODEL, dims: 384, topK: 5, documentIds: null, mode: "vector" as const };
    const viaIndex = await withTenant(ACME, (tx) => searchChunks(tx, search));
    const exact = await withTenant(ACME, (tx) => searchChunks(tx, { ...search, strategy: "exact" }));
    // Independent random vectors have no meaningful neighbours beyond the exact match (recall is measured on clustered ones in bench/search.ts).
    expect(viaIndex).toHaveLength(5);
    expect(exact).toHaveLength(5);
    expect(viaIndex[0].ordinal).toBe(734);
    expect(exact[0].ordinal).toBe(734);
    expect(viaIndex[0].similarity).toBeCloseTo(1, 4);
  });

  it("falls back to an exact scan for models without an index, and never splices values", () => {
    expect(vectorPlan("my-server-model", 384).strategy).toBe("exact");
    expect(vectorPlan(LOCAL_EMBEDDING_MODEL, 512).strategy).toBe("exact");
    const indexed = vectorPlan("text-embedding-3-large", 3072);
    expect(indexed.strategy).toBe("hnsw");
    expect(indexed.column.text).toBe("c.embedding::halfvec(3072)");
    expect(vectorPlan("it's'; DROP TABLE x; --", 384).modelFilter.values).toContain("it's'; DROP TABLE x; --");
    expect(vectorLiteral([0.5, -1, 2e-7])).toBe("[0.5,-1,2e-7]");
    expect(() => vectorLiteral([1, Number.NaN])).toThrow(/non-finite/);
  });
});
