// Reads docx, txt and csv files and chunks the text of every file (PDF text included), inside a
// worker thread with its own heap limit, so a hostile file fails alone instead of taking the
// server's heap or event loop. The worker lives on between files.
//
// Plain JavaScript, loaded natively for the reason pdf-worker.mjs gives: the pool
// (offthread-client.ts) imports this file by its path with turbopackIgnore and calls
// `startExtractWorker`, which starts this same file as a worker. The extraction code itself is
// TypeScript (offthread.ts and the modules it imports, relative imports only), loaded here with
// tsx's `tsImport`, so the worker runs the very code the tests exercise, under vitest, tsx and
// `next start` alike. tsx is therefore needed at run time, as it already is for
// `npm run worker` and `npm run db:migrate`.
//
// In:  messages ExtractionJob (offthread.ts), one job at a time
// Out: one ExtractionReply per job
import { isMainThread, parentPort, Worker } from "node:worker_threads";

/** Starts a worker thread running this file. */
export function startExtractWorker(options) {
  return new Worker(new URL(import.meta.url), options);
}

if (!isMainThread) {
  const { tsImport } = await import("tsx/esm/api");
  const { runExtractionJob } = await tsImport("./offthread.ts", import.meta.url);
  parentPort.on("message", async (job) => {
    parentPort.postMessage(await runExtractionJob(job));
  });
}
