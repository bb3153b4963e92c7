import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Principal } from "@/lib/auth/roles";
import { withTenant } from "@/lib/db/tenant";
import { createDocument } from "./documents";
import { INDEX_BATCH_CHUNKS, indexDocument } from "./index-document";
import { uploadDocumentFile } from "./upload";

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
