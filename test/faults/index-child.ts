// Child process of index-kill.test.ts: indexes one document of the test's database (the embedded
// engine in QUARRY_DATA_DIR) with the offline embedder slowed to 300 ms a batch, and prints
// "progress" once a first batch of the new generation is committed, so the test can kill it
// mid-run. Run with tsx --conditions=react-server.
import type { Principal } from "@/lib/auth/roles";
import { closeDb, getDb } from "@/lib/db/client";
import { getEmbedder } from "@/lib/embeddings";
import { indexDocument } from "@/lib/documents/index-document";

const [documentId] = process.argv.slice(2);
const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme Retail", role: "admin", locationIds: null, via: "bearer" };

await getDb();
const embedder = getEmbedder();
const embed = embedder.embedDocuments.bind(embedder);
let calls = 0;
embedder.embedDocuments = async (texts, options) => {
  // Batch n + 1 is embedded while batch n is stored: the third call starts after batch 1 was committed.
  if (++calls === 3) process.stdout.write("progress\n");
  await new Promise((resolve) => setTimeout(resolve, 300));
  return embed(texts, options);
};
await indexDocument(admin, documentId);
process.stdout.write("done\n");
await closeDb();
