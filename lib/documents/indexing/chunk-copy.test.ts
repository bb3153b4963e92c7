import { describe, expect, it } from "vitest";
import type { Principal } from "@/lib/access/roles";
import { withTenantBulk } from "@/lib/db/bulk";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { CHUNK_COPY_COLUMNS, ChunkCopyWriter, type ChunkCopyRow } from "./chunk-copy";
import { createDocument } from "../files/documents";
import { CHUNK_STAGING_TABLE, insertAsText } from "./store-chunks";

const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme Retail", role: "admin", locationIds: null, via: "bearer" };

const row = (documentId: string, generation: number, ordinal: number, orgId = "org_acme"): ChunkCopyRow => ({
  orgId, documentId, generation, ordinal, text: `chunk ${ordinal}: naïve café, "quoted", tab\there`, wordStart: ordinal * 10, wordEnd: ordinal * 10 + 12,
  pageStart: ordinal === 0 ? null : ordinal, pageEnd: ordinal === 0 ? null : ordinal + 1, rowStart: null, rowEnd: ordinal === 2 ? 7 : null,
  // A model without an HNSW index, so a 4-dimension vector is allowed.
  model: "bulk-test-model", embedding: [0.25, -1.5, 3.0625, 1e-3],
});

async function copyAndMove(rows: ChunkCopyRow[]) {
  const writer = new ChunkCopyWriter();
  for (const r of rows) writer.add(r);
  const data = writer.finish();
  const columns = CHUNK_COPY_COLUMNS.join(", ");
  await withTenantBulk(
    admin,
    async (staging) => {
      await staging.exec(CHUNK_STAGING_TABLE);
      await staging.copyBinary!(`chunk_copy_staging (${columns})`, data);
    },
    (tx) => tx.exec(`INSERT INTO document_chunks (${columns}) SELECT ${columns} FROM chunk_copy_staging`),
  );
}

async function stored(documentId: string, generation: number) {
  return withTenant(admin, (tx) =>
    tx.$queryRaw<{ ordinal: number; text: string; page_start: number | null; page_end: number | null; row_end: number | null; dims: number; embedding: string }[]>`
      SELECT ordinal, text, page_start, page_end, row_end, dims, embedding::text AS embedding FROM document_chunks
      WHERE document_id = ${documentId} AND generation = ${generation} ORDER BY ordinal`,
  );
}

describe("storing chunks in bulk", () => {
  it("binary COPY writes every column as the text INSERT does, nulls and UTF-8 included", async () => {
    const doc = await createDocument(admin, { filename: "bulk.txt", description: "", tags: [] });
    const rows = [0, 1, 2].map((i) => row(doc.id, 1, i));
    await copyAndMove(rows);
    await withTenantBulk(admin, async () => undefined, (tx) => insertAsText(tx, rows.map((r) => ({ ...r, generation: 2 }))));
    const viaCopy = await stored(doc.id, 1);
    expect(viaCopy).toEqual(await stored(doc.id, 2));
    expect(viaCopy).toHaveLength(3);
    expect(viaCopy[0]).toMatchObject({ ordinal: 0, text: rows[0].text, page_start: null, page_end: null, row_end: null, dims: 4, embedding: "[0.25,-1.5,3.0625,0.001]" });
    expect(viaCopy[2]).toMatchObject({ page_start: 2, page_end: 3, row_end: 7 });
  });

  it("row-level security still decides: rows of another organization are refused on both paths, and nothing is written", async () => {
    const doc = await createDocument(admin, { filename: "foreign.txt", description: "", tags: [] });
    const foreign = [row(doc.id, 1, 0), row(doc.id, 1, 1, "org_globex")];
    await expect(copyAndMove(foreign)).rejects.toThrow(/row-level security/);
    await expect(withTenantBulk(admin, async () => undefined, (tx) => insertAsText(tx, foreign))).rejects.toThrow(/row-level security/);
    expect(await stored(doc.id, 1)).toEqual([]);
  });

  it("stores text and tsvector uncompressed, through the staging table too (pglz was a tenth of PGlite's time per stored chunk)", async () => {
    const doc = await createDocument(admin, { filename: "plain.txt", description: "", tags: [] });
    // Long and repetitive: pglz would shrink it to a few percent of its size.
    const text = "revenue grew in every region ".repeat(200);
    await copyAndMove([{ ...row(doc.id, 1, 0), text }]);
    const [sizes] = await withTenant(admin, (tx) =>
      tx.$queryRaw<{ text_bytes: number; text_stored: number }[]>`
        SELECT octet_length(text) AS text_bytes, pg_column_size(text) AS text_stored FROM document_chunks WHERE document_id = ${doc.id}`,
    );
    expect(sizes.text_bytes).toBe(text.length);
    expect(sizes.text_stored).toBeGreaterThanOrEqual(sizes.text_bytes);
    const storage = await (await getDb()).system.query<{ attname: string; attstorage: string }>(
      "SELECT attname, attstorage FROM pg_attribute WHERE attrelid = 'document_chunks'::regclass AND attname IN ('text', 'tsv') ORDER BY attname",
    );
    expect(storage).toEqual([{ attname: "text", attstorage: "e" }, { attname: "tsv", attstorage: "e" }]);
  });

  it("refuses a vector with a non-finite value before anything is sent", () => {
    expect(() => new ChunkCopyWriter().add({ ...row("doc", 1, 0), embedding: [1, Number.NaN] })).toThrow(/non-finite/);
  });
});
