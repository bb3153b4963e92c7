import { Readable } from "node:stream";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { Principal } from "@/lib/access/roles";
import { withTenantBulk } from "@/lib/db/bulk";
import { configSingleton } from "@/lib/config";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { CHUNK_COPY_COLUMNS, ChunkCopyWriter, type ChunkCopyRow } from "./chunk-copy";
import { createDocument } from "../files/documents";
import { INDEX_BATCH_CHUNKS, emptyIndexTimings, indexDocument } from "./index-document";
import { CHUNK_STAGING_TABLE, insertAsText } from "./store-chunks";
import { searchDocuments } from "../search/search";
import { embeddedTsvectorWorker, tsvectorCalculator, type TsvectorCalculator } from "./tsvector-calculator";
import { uploadDocumentFile } from "../files/upload";

const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme Retail", role: "admin", locationIds: null, via: "bearer" };

/** What the english configuration treats in many ways: punctuation, URLs, e-mail, numbers, hyphenation, accents, stop words. */
const VARIED = [
  "The quick brown foxes were RUNNING, and they've been running since 2024-03-05 at 14:30!",
  "See https://example.com/path/to/page?query=1&b=two#frag or mail Jane.Doe+tag@sub.example.org (cc: ops@example.net).",
  "State-of-the-art, well-known co-operation; re-indexing e-mails; half-baked ideas -- dashes — and “quotes”.",
  "Numbers: 3.14159, -42, 1e10, 0x1F, 12,345.67, version 2.0.1-beta, phone +1-555-0100, 50% off, $19.99.",
  "Accents: naïve café résumé Ångström façade Zürich São Paulo Ελληνικά русский 日本語 déjà vu.",
  "a an the of and or but if then when at by for with about against between into through during",
  "Paths /usr/local/bin and C:\\Windows\\System32, tags #hashtag @mention, file report_final_v2.xlsx, <b>html</b> &amp; entities.",
  "",
];

function rows(documentId: string, generation: number, texts: string[], tsv: (Uint8Array | null)[] | null): ChunkCopyRow[] {
  return texts.map((text, i) => ({
    orgId: admin.orgId, documentId, generation, ordinal: i, text, wordStart: i, wordEnd: i + 1, pageStart: null, pageEnd: null, rowStart: null, rowEnd: null,
    // A model without an HNSW index, so a 2-dimension vector is allowed.
    model: "tsv-test-model", embedding: [1, 0], tsv: tsv?.[i] ?? null,
  }));
}

/** Each stored chunk's tsvector beside what the database itself computes from its text. */
async function compared(documentId: string, generation: number) {
  return withTenant(admin, (tx) =>
    tx.$queryRaw<{ ordinal: number; stored: string | null; computed: string; equal: boolean }[]>`
      SELECT ordinal, tsv::text AS stored, to_tsvector('english', text)::text AS computed, tsv = to_tsvector('english', text) AS equal
      FROM document_chunks WHERE document_id = ${documentId} AND generation = ${generation} ORDER BY ordinal`,
  );
}

describe("the tsvector calculator", () => {
  beforeAll(async () => {
    // test/setup-file.ts turns the embedded calculator off for the rest of the suite.
    process.env.QUARRY_EMBEDDED_TSVECTOR_WORKER = "true";
    configSingleton.set(undefined);
    const db = await getDb();
    if (db.kind === "pglite") await embeddedTsvectorWorker().warm();
  }, 180_000);

  it("computes, for varied text, exactly what the database computes; spliced into the binary COPY it is stored as is", async () => {
    const db = await getDb();
    const tsv = (await tsvectorCalculator(db)?.compute(VARIED, "varied")) ?? null;
    expect(tsv).not.toBeNull();
    expect(tsv).toHaveLength(VARIED.length);
    const doc = await createDocument(admin, { filename: "varied.txt", description: "", tags: [] });
    const writer = new ChunkCopyWriter();
    for (const row of rows(doc.id, 1, VARIED, tsv)) writer.add(row);
    const columns = CHUNK_COPY_COLUMNS.join(", ");
    await withTenantBulk(
      admin,
      async (staging) => {
        await staging.exec(CHUNK_STAGING_TABLE);
        await staging.copyBinary!(`chunk_copy_staging (${columns})`, writer.finish());
      },
      (tx) => tx.exec(`INSERT INTO document_chunks (${columns}) SELECT ${columns} FROM chunk_copy_staging`),
    );
    const stored = await compared(doc.id, 1);
    expect(stored).toHaveLength(VARIED.length);
    for (const row of stored) expect(row, VARIED[row.ordinal]).toMatchObject({ stored: row.computed, equal: true });
    // Not vacuous: stemming, URLs, e-mail and accents are there, stop words are not.
    const all = stored.map((r) => r.stored).join(" ");
    for (const lexeme of ["'run'", "'example.com/path/to/page?query=1&b=two#frag'", "'tag@sub.example.org'", "'naïv'", "'3.14159'", "'state-of-the-art'"]) expect(all).toContain(lexeme);
    expect([stored[5].stored, stored[7].stored]).toEqual(["", ""]);
  });

  it("a row written without a tsvector gets the database's own from the trigger, and a changed text gets a new one", async () => {
    const doc = await createDocument(admin, { filename: "trigger.txt", description: "", tags: [] });
    await withTenantBulk(admin, async () => undefined, (tx) => insertAsText(tx, rows(doc.id, 1, VARIED, null)));
    for (const row of await compared(doc.id, 1)) expect(row.equal).toBe(true);
    await withTenant(admin, (tx) => tx.$executeRaw`UPDATE document_chunks SET text = 'penguins swimming' WHERE document_id = ${doc.id} AND ordinal = 0`);
    expect((await compared(doc.id, 1))[0]).toMatchObject({ stored: "'penguin':1 'swim':2", equal: true });
  });

  it("indexing splices the calculator's tsvectors, and keyword and hybrid search find the just-indexed document's words", async () => {
    const filler = ["stores", "open", "daily", "staff", "rotate", "shifts", "across", "regional", "teams"];
    // Enough text for several batches; one rare, hyphenated word near the end.
    const words = Array.from({ length: 70_000 }, (_, i) => filler[(i * 7) % filler.length]);
    words[66_000] = "quokka-friendly";
    words[66_001] = "Zürich";
    const bytes = Buffer.from(words.join(" "));
    const record = await createDocument(admin, { filename: "calculated.txt", description: "", tags: [] });
    await uploadDocumentFile(admin, record.id, {
      body: Readable.toWeb(Readable.from([bytes])) as ReadableStream<Uint8Array>,
      declaredType: "text/plain",
      declaredLength: bytes.length,
    });
    const timings = emptyIndexTimings();
    const indexed = await indexDocument(admin, record.id, { timings });
    expect(indexed.status).toBe("indexed");
    // The calculator computed at least one unit (it takes them from the front while the store follows).
    expect(timings.tsvSupplied).toBeGreaterThan(0);
    const stored = await compared(record.id, 1);
    expect(stored).toHaveLength(indexed.chunk_count);
    expect(stored.filter((r) => !r.equal)).toEqual([]);

    const matching = await withTenant(admin, (tx) =>
      tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM document_chunks
        WHERE document_id = ${record.id} AND tsv @@ websearch_to_tsquery('english', 'quokka-friendly Zürich')`,
    );
    expect(matching[0].n).toBeGreaterThan(0);
    const hybrid = await searchDocuments(admin, { query: "quokka-friendly", mode: "hybrid", top_k: 3, document_ids: [record.id] });
    expect(hybrid.results[0].text).toContain("quokka-friendly");
  });

  it("a calculator that is unavailable, or gives up midway, leaves the rest to the trigger: indexing succeeds, every tsvector the database's own", async () => {
    const real = tsvectorCalculator(await getDb());
    if (!real) throw new Error("the tsvector calculator is turned off");
    let calls = 0;
    // Answers the first unit it is given (the document's first), then is unavailable.
    const givingUp: TsvectorCalculator = { compute: (texts, scope) => (++calls === 1 ? real.compute(texts, scope) : Promise.resolve(null)) };
    const unavailable: TsvectorCalculator = { compute: async () => null };
    const filler = ["harbour", "cranes", "lift", "containers", "onto", "ships", "before", "dawn"];
    const bytes = Buffer.from(Array.from({ length: 160_000 }, (_, i) => filler[(i * 5) % filler.length]).join(" "));
    for (const [name, calculator, supplied] of [["gives-up.txt", givingUp, true], ["unavailable.txt", unavailable, false]] as const) {
      const record = await createDocument(admin, { filename: name, description: "", tags: [] });
      await uploadDocumentFile(admin, record.id, { body: Readable.toWeb(Readable.from([bytes])) as ReadableStream<Uint8Array>, declaredType: "text/plain", declaredLength: bytes.length });
      const timings = emptyIndexTimings();
      const indexed = await indexDocument(admin, record.id, { timings, tsvectorCalculator: calculator });
      expect(indexed.status).toBe("indexed");
      // Several batches, of which the calculator supplied at most the one it answered.
      expect(timings.chunks).toBeGreaterThan(2 * INDEX_BATCH_CHUNKS);
      expect(timings.tsvSupplied > 0).toBe(supplied);
      expect(timings.tsvSupplied).toBeLessThan(timings.chunks);
      const stored = await compared(record.id, 1);
      expect(stored).toHaveLength(indexed.chunk_count);
      expect(stored.filter((r) => !r.equal || r.stored === null)).toEqual([]);
    }
  });
});

describe("QUARRY_EMBEDDED_TSVECTOR_WORKER", () => {
  it("false leaves the embedded engine without a calculator (the database computes every tsvector); a server keeps its second backend", async () => {
    const db = await getDb();
    vi.stubEnv("QUARRY_EMBEDDED_TSVECTOR_WORKER", "false");
    configSingleton.set(undefined);
    try {
      if (db.kind === "pglite") expect(tsvectorCalculator(db)).toBeNull();
      else expect(tsvectorCalculator(db)).not.toBeNull();
    } finally {
      vi.unstubAllEnvs();
      configSingleton.set(undefined);
    }
  });
});
