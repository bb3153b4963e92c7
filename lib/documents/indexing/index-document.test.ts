import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Principal } from "@/lib/access/roles";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { createDocument } from "../files/documents";
import { INDEX_BATCH_CHUNKS, indexDocument } from "./index-document";
import { uploadDocumentFile } from "../files/upload";

const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme Retail", role: "admin", locationIds: null, via: "bearer" };

describe("indexDocument while other requests wait", () => {
  it("gives the event loop a turn between batches, so a progress poll sees the run advance", async () => {
    const words = ["stores", "open", "daily", "staff", "rotate", "shifts", "across", "regional", "teams", "under", "local", "policy"];
    const bytes = Buffer.from(Array.from({ length: 450 * INDEX_BATCH_CHUNKS * 5 }, (_, i) => words[(i * 7) % words.length]).join(" "));
    const record = await createDocument(admin, { filename: "long.txt", description: "", tags: [] });
    await uploadDocumentFile(admin, record.id, {
      body: Readable.toWeb(Readable.from([bytes])) as ReadableStream<Uint8Array>,
      declaredType: "text/plain",
      declaredLength: bytes.length,
    });

    const seen: { done: number; total: number }[] = [];
    let running = true;
    // A timer-driven poll, as the documents page's: it runs only when the event loop gets a turn.
    const poll = new Promise<void>((resolve) => {
      const tick = async () => {
        const row = await withTenant(admin, (tx) => tx.document.findUniqueOrThrow({ where: { id: record.id }, select: { indexProgressDone: true, indexProgressTotal: true } }));
        seen.push({ done: row.indexProgressDone, total: row.indexProgressTotal });
        if (running) setTimeout(tick, 5);
        else resolve();
      };
      setTimeout(tick, 5);
    });
    const indexed = await indexDocument(admin, record.id);
    running = false;
    await poll;

    expect(indexed.chunk_count).toBeGreaterThanOrEqual(4 * INDEX_BATCH_CHUNKS);
    const midway = seen.filter((p) => p.total === indexed.chunk_count && p.done > 0 && p.done < p.total);
    expect(midway.length).toBeGreaterThan(1);
  });
});

describe("indexDocument when a store fails", () => {
  it("ends only after every batch in flight has, and leaves no chunk of the failed generation", async () => {
    const db = await getDb();
    // Batch 1 (ordinals from 128) is slow to store and batch 2 (from 256) is refused: on a server both are in
    // flight at once, and batch 2 fails while batch 1 is still being stored.
    await db.system.exec(`CREATE FUNCTION test_refuse_batch() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
      BEGIN
        IF NEW.ordinal = ${INDEX_BATCH_CHUNKS} THEN PERFORM pg_sleep(0.4); END IF;
        IF NEW.ordinal = ${2 * INDEX_BATCH_CHUNKS} THEN RAISE EXCEPTION 'test: this batch is refused'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_refuse_batch BEFORE INSERT ON document_chunks FOR EACH ROW EXECUTE FUNCTION test_refuse_batch()`);
    try {
      const words = ["ferries", "cross", "the", "sound", "hourly", "in", "summer"];
      const bytes = Buffer.from(Array.from({ length: 450 * INDEX_BATCH_CHUNKS * 4 }, (_, i) => words[(i * 3) % words.length]).join(" "));
      const record = await createDocument(admin, { filename: "refused.txt", description: "", tags: [] });
      await uploadDocumentFile(admin, record.id, { body: Readable.toWeb(Readable.from([bytes])) as ReadableStream<Uint8Array>, declaredType: "text/plain", declaredLength: bytes.length });

      await expect(indexDocument(admin, record.id)).rejects.toThrow(/this batch is refused/);
      if (db.kind === "postgres") {
        // The run has ended only after batch 1's store did: no statement of it is still running.
        const running = await db.system.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%FROM chunk_copy_staging%'");
        expect(running[0].n).toBe(0);
      }
      const after = await withTenant(admin, (tx) => tx.document.findUniqueOrThrow({ where: { id: record.id } }));
      expect(after).toMatchObject({ status: "failed", indexJobId: null, indexProgressDone: 0, chunkCount: 0 });
      // Whether a store committed before the clean-up (which deleted its chunks) or would have after it (its
      // progress update finds the job gone, so it rolls back), nothing of the failed generation is left.
      const left = await db.system.query<{ n: number }>("SELECT count(*)::int AS n FROM document_chunks WHERE document_id = $1", [record.id]);
      expect(left[0].n).toBe(0);
    } finally {
      await db.system.exec("DROP TRIGGER test_refuse_batch ON document_chunks; DROP FUNCTION test_refuse_batch()");
    }
  });
});
