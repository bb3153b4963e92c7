import { describe, expect, it } from "vitest";
import type { Principal } from "@/lib/access/roles";
import { getDb } from "@/lib/db/client";
import { createDocument, deleteDocument } from "../files/documents";
import { deadRows, vacuumDueTables } from "./housekeeping";
import { indexDocument } from "./index-document";
import { uploadDocumentFile } from "../files/upload";

const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme Retail", role: "admin", locationIds: null, via: "bearer" };

const chunkTableBytes = async () => {
  const { system } = await getDb();
  const [row] = await system.query<{ bytes: string }>("SELECT pg_total_relation_size('document_chunks') AS bytes");
  return Number(row.bytes);
};

describe("embedded housekeeping (issue 28 §4)", () => {
  it("re-indexing the same document 20 times with a vacuum of what is due after each keeps the chunk table from growing", { timeout: 180_000 }, async () => {
    const db = await getDb();
    const words = "pallet forklift shift supplier invoice chiller alarm voucher loyalty member delivery refund".split(" ");
    const bytes = Buffer.from(Array.from({ length: 12_000 }, (_, i) => words[(i * 7) % words.length]).join(" "));
    const record = await createDocument(admin, { filename: "handbook.txt", description: "", tags: [] });
    await uploadDocumentFile(admin, record.id, { body: new Blob([new Uint8Array(bytes)]).stream(), declaredType: "text/plain", declaredLength: bytes.length, index: false });

    const before = await chunkTableBytes();
    const sizes: number[] = [];
    for (let round = 1; round <= 20; round++) {
      await indexDocument(admin, record.id, { tsvectorCalculator: null });
      // What the worker runs when the engine is quiet; forced, so the test does not wait for the statistics to be flushed.
      await vacuumDueTables(db, { force: true });
      sizes.push(await chunkTableBytes());
    }
    console.log(`document_chunks before, then after each re-index (vacuumed), kB: ${[before, ...sizes].map((b) => Math.round(b / 1024)).join(" ")}`);
    // Without housekeeping each re-index adds about one generation's size for good (15 more from round 5 to 20). With
    // it, the space a vacuum frees is reused by the next generation: at most two generations' worth more in 15 rounds.
    const generation = sizes[0] - before;
    expect(sizes[19] - sizes[4]).toBeLessThanOrEqual(2 * generation);

    await deleteDocument(admin, record.id);
    const reports = await vacuumDueTables(db, { force: true });
    expect(reports.map((r) => r.table)).toEqual(["document_chunks", "documents", ...(db.kind === "pglite" ? ["(checkpoint)"] : [])]);
    // The statistics the check reads: both tables are there (the vacuum's own counts reset the dead rows).
    expect((await deadRows(db)).map((r) => r.table)).toEqual(["document_chunks", "documents"]);
  });

  it("vacuums nothing when no table has passed autovacuum's rule", async () => {
    const db = await getDb();
    await vacuumDueTables(db, { force: true });
    expect(await vacuumDueTables(db)).toEqual([]);
  });
});
