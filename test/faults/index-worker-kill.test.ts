// Fault (issue 28 §1): the worker running a document's index job is killed (SIGKILL) mid-job. The
// request stays pending on the document's row; once the dead run's heartbeat lapses a new worker's
// sweep queues it again, the retry deletes what the killed run had stored, and the document ends
// indexed exactly once: one new generation, its chunks once, two attempts. A job repeated later
// (pg-boss handing the dead worker's job out again) finds nothing to do.
import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import * as one from "@/app/api/v1/documents/[id]/route";
import * as upload from "@/app/api/v1/documents/[id]/upload/route";
import * as collection from "@/app/api/v1/documents/route";
import * as search from "@/app/api/v1/documents/search/route";
import { closeDb, getDb } from "@/lib/db/client";
import { prose } from "@/lib/documents/extract/fixtures/generate";
import { indexLease } from "@/lib/documents/indexing/index-document";
import { drainIndexQueue, sendIndexJob } from "@/lib/documents/indexing/index-jobs";
import { closeQueue } from "@/lib/job-queue";
import { call, tokenFor } from "@/test/helpers";
import { paced } from "@/test/machine-pace";
import { PACE } from "./probe";

process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ in_process_worker: false });

/** Runs index-worker-child.ts; resolves once it printed `until` (then SIGKILLs it when `kill`) and it has exited. */
function worker(mode: "kill" | "finish", documentId: string, until: string): Promise<{ output: string; signal: NodeJS.Signals | null; code: number | null }> {
  // tsx as a loader in this very process: its CLI would run the script in a grandchild that SIGKILL does not reach.
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=react-server", path.join("test", "faults", "index-worker-child.ts"), mode, documentId], {
    cwd: process.cwd(),
    env: { ...process.env, QUARRY_LOG_LEVEL: "silent" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
    if (mode === "kill" && output.includes(until)) child.kill("SIGKILL");
  });
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const deadline = setTimeout(() => child.kill("SIGKILL"), paced(90_000, PACE));
  return new Promise((resolve) =>
    child.on("exit", (code, signal) => {
      clearTimeout(deadline);
      resolve({ output, signal, code });
    }),
  );
}

describe("fault: an index worker killed mid-job", () => {
  it("leaves the request pending; a new worker indexes the document exactly once", { timeout: paced(180_000, PACE) }, async () => {
    indexLease.heartbeatMs = 200;
    indexLease.leaseMs = 2_000;
    const token = await tokenFor("acme", "admin");
    const id = (await call(collection.POST, "POST", "/api/v1/documents", { token, body: { filename: "manual.txt" } })).json.id as string;
    // Several batches of chunks, so the killed run has stored some of its generation.
    const uploaded = await call(upload.POST, "POST", `/api/v1/documents/${id}/upload`, {
      token,
      params: { id },
      rawBody: new Uint8Array(Buffer.from(`Copper cathodes leave Antwerp on Fridays. ${prose(120_000, 7)}`)),
      headers: { "content-type": "text/plain" },
    });
    expect(uploaded.status, uploaded.text).toBe(200);
    expect(uploaded.json.index_job).toMatchObject({ state: "queued" });
    const { system } = await getDb();
    const [{ request }] = await system.query<{ request: string }>("SELECT index_request_id AS request FROM documents WHERE id = $1", [id]);
    // The embedded engine is one process's: hand the data folder to the worker (a server database is shared anyway).
    await closeQueue();
    await closeDb();

    const killed = await worker("kill", id, "progress");
    expect(killed.output).toContain("progress");
    expect(killed.signal).toBe("SIGKILL");

    const state = async () =>
      (await (await getDb()).system.query<{ status: string; job_state: string; attempts: number; generation: number; chunks: number; request: string | null; current: number; other: number }>(
        `SELECT d.status, d.index_job_state AS job_state, d.index_attempts AS attempts, d.index_generation AS generation, d.chunk_count AS chunks,
           d.index_request_id AS request,
           (SELECT count(*)::int FROM document_chunks c WHERE c.document_id = d.id AND c.generation = d.index_generation) AS current,
           (SELECT count(*)::int FROM document_chunks c WHERE c.document_id = d.id AND c.generation <> d.index_generation) AS other
         FROM documents d WHERE d.id = $1`,
        [id],
      ))[0];
    const atKill = await state();
    // Killed mid-run: the request is still pending, one attempt made, batches of generation 1 stored but not swapped in.
    expect(atKill).toMatchObject({ status: "indexing", job_state: "running", attempts: 1, generation: 0, chunks: 0, request, current: 0 });
    expect(atKill.other).toBeGreaterThan(0);
    // The status endpoint no longer calls it running once the heartbeat has lapsed.
    await new Promise((resolve) => setTimeout(resolve, indexLease.leaseMs + 500));
    await closeQueue();
    await closeDb();

    const finished = await worker("finish", id, "indexed");
    expect(finished.output, finished.output).toContain("indexed");
    expect(finished.code).toBe(0);

    await getDb();
    const after = await state();
    expect(after).toMatchObject({ status: "indexed", job_state: "done", attempts: 2, generation: 1, request: null, other: 0 });
    expect(after.chunks).toBeGreaterThan(200);
    expect(after.current).toBe(after.chunks);
    // Every chunk once: ordinals 0…n-1 without repeats.
    const [ordinals] = await (await getDb()).system.query<{ n: number; distinct_n: number; max: number }>(
      "SELECT count(*)::int AS n, count(DISTINCT ordinal)::int AS distinct_n, max(ordinal) AS max FROM document_chunks WHERE document_id = $1",
      [id],
    );
    expect(ordinals).toEqual({ n: after.chunks, distinct_n: after.chunks, max: after.chunks - 1 });

    // The dead worker's job handed out again: nothing to do, nothing changes.
    await sendIndexJob({ orgId: "org_acme", documentId: id, requestId: request });
    expect(await drainIndexQueue()).toMatchObject({ done: 0, nothing: 1 });
    expect(await state()).toEqual(after);
    const hits = await call(search.POST, "POST", "/api/v1/documents/search", { token, body: { query: "copper cathodes Antwerp", top_k: 1, document_ids: [id] } });
    expect(hits.json.results[0].text).toMatch(/^Copper cathodes leave Antwerp/);
    expect((await call(one.GET, "GET", `/api/v1/documents/${id}`, { token, params: { id } })).json.index_job).toMatchObject({ state: "done", attempts: 2 });
    await closeQueue();
  });
});
