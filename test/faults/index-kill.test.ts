// Fault: the process running an indexing job is killed (SIGKILL) in the middle of storing the
// new generation. Indexing writes a new generation beside the current one and swaps it in with
// one update at the end, so the previous index must still be searchable after the kill, the
// database must come back with everything committed, and a later run must clean up and succeed.
import { spawn } from "node:child_process";
import path from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import * as index from "@/app/api/v1/documents/[id]/index/route";
import * as one from "@/app/api/v1/documents/[id]/route";
import * as upload from "@/app/api/v1/documents/[id]/upload/route";
import * as collection from "@/app/api/v1/documents/route";
import * as search from "@/app/api/v1/documents/search/route";
import * as locations from "@/app/api/v1/locations/route";
import { closeDb, getDb } from "@/lib/db/client";
import { prose } from "@/lib/documents/extract/fixtures/generate";
import { call, tokenFor } from "@/test/helpers";
import { paced } from "@/test/machine-pace";
import { PACE } from "./probe";

/** How long the first request after the kill may take: the engine's restart and WAL replay (30 s on a quiet machine, stretched by the pace). */
const REOPEN_MS = paced(30_000, PACE);

/** Runs index-child.ts on `documentId`, kills it with SIGKILL once it reports progress, and returns what it printed. */
function indexInChildAndKill(documentId: string): Promise<{ output: string; signal: NodeJS.Signals | null }> {
  // tsx as a loader in this very process: its CLI would run the script in a grandchild that SIGKILL does not reach.
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=react-server", path.join("test", "faults", "index-child.ts"), documentId], {
    cwd: process.cwd(),
    env: { ...process.env, QUARRY_LOG_LEVEL: "silent" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes("progress")) child.kill("SIGKILL");
  });
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const deadline = setTimeout(() => child.kill("SIGKILL"), paced(60_000, PACE));
  return new Promise((resolve) =>
    child.on("exit", (_code, signal) => {
      clearTimeout(deadline);
      resolve({ output, signal });
    }),
  );
}

/** The texts of the document's chunks that a search finds. */
const searchTexts = async (token: string, query: string, documentId: string) =>
  ((await call(search.POST, "POST", "/api/v1/documents/search", { token, body: { query, top_k: 5, document_ids: [documentId] } })).json.results as { text: string }[]).map((r) => r.text);

describe("fault: an indexing process killed mid-run", () => {
  // About 10 s on a quiet 2-core machine; the limit leaves room for a loaded CI runner.
  it("keeps the previous index searchable and everything committed; a later run cleans up and succeeds", { timeout: paced(120_000, PACE) }, async () => {
    const token = await tokenFor("acme", "admin");
    const put = (id: string, text: string) =>
      call(upload.POST, "POST", { token, params: { id }, rawBody: Readable.toWeb(Readable.from([Buffer.from(text)])) as ReadableStream<Uint8Array>, headers: { "content-type": "text/plain" } });

    const id = (await call(collection.POST, "POST", "/api/v1/documents", { token, body: { filename: "handbook.txt" } })).json.id as string;
    expect((await put(id, `The warehouse in Rotterdam ships pallets of zinc every Tuesday. ${prose(300)}`)).status).toBe(200);
    const first = await call(index.POST, "POST", { token, params: { id } });
    expect(first.status).toBe(200);
    expect((await searchTexts(token, "zinc pallets Rotterdam", id)).join()).toMatch(/pallets of zinc/);

    // A new, long version of the file (many batches), indexed by a process that gets killed.
    expect((await put(id, `Copper cathodes leave Antwerp on Fridays. ${prose(120_000, 7)}`)).status).toBe(200);
    const { system } = await getDb();
    const [before] = await system.query<{ generation: number; chunks: number; orders: number; documents: number }>(
      `SELECT d.index_generation AS generation, d.chunk_count AS chunks, (SELECT count(*)::int FROM orders) AS orders, (SELECT count(*)::int FROM documents) AS documents
       FROM documents d WHERE d.id = $1`,
      [id],
    );
    await closeDb();

    const child = await indexInChildAndKill(id);
    expect(child.output).toMatch(/^progress/);
    expect(child.output).not.toContain("done");
    expect(child.signal).toBe("SIGKILL");

    // The embedded engine recovers from the kill by replaying its WAL, not by anything that grows
    // with the data: the first request after it is answered in seconds (10.7-13.6 s at load 20, so
    // the bound leaves room for a loaded runner; a reseed would take minutes).
    const reopened = performance.now();
    const globex = await call(locations.GET, "GET", "/api/v1/locations", { token: await tokenFor("globex", "admin") });
    expect(globex.status).toBe(200);
    expect(performance.now() - reopened).toBeLessThan(REOPEN_MS);

    const db = await getDb();
    const [after] = await db.system.query<{ generation: number; chunks: number; orders: number; documents: number; status: string; stored: number; orphans: number }>(
      `SELECT d.index_generation AS generation, d.chunk_count AS chunks, d.status,
        (SELECT count(*)::int FROM orders) AS orders, (SELECT count(*)::int FROM documents) AS documents,
        (SELECT count(*)::int FROM document_chunks c WHERE c.document_id = d.id AND c.generation = d.index_generation) AS stored,
        (SELECT count(*)::int FROM document_chunks c WHERE c.document_id = d.id AND c.generation > d.index_generation) AS orphans
       FROM documents d WHERE d.id = $1`,
      [id],
    );
    expect(after).toMatchObject({ generation: before.generation, chunks: before.chunks, orders: before.orders, documents: before.documents, stored: before.chunks, status: "indexing" });
    // The killed run had committed batches of its generation; they are invisible to search.
    expect(after.orphans).toBeGreaterThan(0);
    // Search reads the previous generation only.
    expect((await searchTexts(token, "zinc pallets Rotterdam", id)).join()).toMatch(/pallets of zinc/);
    const during = await searchTexts(token, "copper cathodes Antwerp supplier contract", id);
    expect(during.length).toBeGreaterThan(0);
    expect(during.join()).not.toMatch(/Copper cathodes/);

    // Its lease keeps other runs out until it expires (the dead process cannot say it died).
    expect((await call(index.POST, "POST", { token, params: { id } })).status).toBe(409);
    await db.system.query("UPDATE documents SET index_job_started_at = now() - interval '1 hour' WHERE id = $1", [id]);
    const again = await call(index.POST, "POST", { token, params: { id } });
    expect(again.status).toBe(200);
    const [firstChunk] = await db.system.query<{ text: string }>(
      "SELECT c.text FROM document_chunks c JOIN documents d ON d.id = c.document_id AND c.generation = d.index_generation WHERE d.id = $1 AND c.ordinal = 0",
      [id],
    );
    expect(firstChunk.text).toMatch(/^Copper cathodes leave Antwerp/);
    expect((await searchTexts(token, "zinc pallets Rotterdam", id)).join()).not.toMatch(/pallets of zinc/);
    const [clean] = await db.system.query<{ other: number }>(
      "SELECT count(*)::int AS other FROM document_chunks c JOIN documents d ON d.id = c.document_id WHERE d.id = $1 AND c.generation <> d.index_generation",
      [id],
    );
    expect(clean.other).toBe(0);
    expect((await call(one.GET, "GET", { token, params: { id } })).json.status).toBe("indexed");
  });
});
