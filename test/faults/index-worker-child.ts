// Child process of index-worker-kill.test.ts: an index worker (pg-boss on the test's database:
// the embedded engine in QUARRY_DATA_DIR, or DATABASE_URL) with a short heartbeat lease.
//   kill <documentId>:   the offline embedder slowed to 300 ms a batch; prints "progress" once a first
//                        batch of the new generation is committed, so the test can SIGKILL it mid-job.
//   finish <documentId>: sweeps at start with no grace (a killed worker's request is due at once),
//                        prints "indexed" once the document's job is done, then exits.
// Run with node --import tsx --conditions=react-server, so SIGKILL reaches this very process.
import { closeDb, getDb } from "@/lib/db/client";
import { indexLease } from "@/lib/documents/indexing/index-document";
import { indexJobPolicy, startIndexWorker } from "@/lib/documents/indexing/index-jobs";
import { getEmbedder } from "@/lib/embeddings";
import { closeQueue, getQueue } from "@/lib/job-queue";

const [mode, documentId] = process.argv.slice(2);
indexLease.heartbeatMs = 200;
indexLease.leaseMs = 2_000;
if (mode === "finish") indexJobPolicy.strandedMs = 0;

const db = await getDb();
if (mode === "kill") {
  const embedder = getEmbedder();
  const embed = embedder.embedDocuments.bind(embedder);
  embedder.embedDocuments = async (texts, options) => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return embed(texts, options);
  };
}
await getQueue(true);
await startIndexWorker();
process.stdout.write("started\n");

const row = async () =>
  (await db.system.query<{ progress: number; job: string | null; state: string | null }>(
    "SELECT index_progress_done AS progress, index_job_id AS job, index_job_state AS state FROM documents WHERE id = $1",
    [documentId],
  ))[0];
for (;;) {
  const now = await row();
  if (mode === "kill" && now.job !== null && now.progress > 0) {
    process.stdout.write("progress\n");
    break;
  }
  if (mode === "finish" && now.state === "done") {
    process.stdout.write("indexed\n");
    await closeQueue();
    await closeDb();
    process.exit(0);
  }
  await new Promise((resolve) => setTimeout(resolve, 20));
}
