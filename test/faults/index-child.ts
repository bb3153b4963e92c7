// Child process of index-kill.test.ts: indexes one document of the test's database (the embedded
// engine in QUARRY_DATA_DIR) with the offline embedder slowed to 300 ms a batch, and prints
// "progress" once a first batch of the new generation is committed, so the test can kill it
// mid-run. Run with tsx --conditions=react-server.
import type { Principal } from "@/lib/access/roles";
import { closeDb, getDb } from "@/lib/db/client";
import { getEmbedder } from "@/lib/embeddings";
import { indexDocument } from "@/lib/documents/indexing/index-document";

const [documentId] = process.argv.slice(2);
const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme Retail", role: "admin", locationIds: null, via: "bearer" };

const db = await getDb();
const embedder = getEmbedder();
const embed = embedder.embedDocuments.bind(embedder);
embedder.embedDocuments = async (texts, options) => {
  await new Promise((resolve) => setTimeout(resolve, 300));
  return embed(texts, options);
};
// The claim resets the progress to 0 and only a batch's own transaction raises it: progress above 0
// while this run holds the job means a batch of the new generation is committed.
const reportFirstBatch = async () => {
  const committed = async () =>
    (await db.system.query<{ n: number }>("SELECT count(*)::int AS n FROM documents WHERE id = $1 AND index_job_id IS NOT NULL AND index_progress_done > 0", [documentId]))[0].n > 0;
  while (!(await committed())) await new Promise((resolve) => setTimeout(resolve, 20));
  process.stdout.write("progress\n");
};
void reportFirstBatch();
await indexDocument(admin, documentId);
process.stdout.write("done\n");
await closeDb();
