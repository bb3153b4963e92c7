import "server-only";
import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { invoke } from "@/lib/operation";
import { findOrganization } from "@/lib/auth/directory";
import type { Principal } from "@/lib/access/roles";
import { DEMO_ORGS } from "@/lib/demo/seed";
import { withTenant } from "@/lib/db/tenant";
import { embeddingStatus } from "@/lib/embeddings";
import { DOCUMENT_TYPES } from "./file-types";
import { createDocument, indexDocument } from "./operations";
import { uploadDocumentFile } from "./files/upload";

const DEMO_DIR = path.join(/*turbopackIgnore: true*/ process.cwd(), "docs", "demo-documents");

/**
 * Demo start: every demo organization without documents gets the small handbook set in
 * docs/demo-documents, created and indexed through the same operations an admin's calls run
 * (the upload, a stream of the request body, through its service), so /documents and /chat
 * have something to find on a fresh clone. Organizations that already have documents are left alone.
 */
export async function seedDemoDocuments(): Promise<number> {
  const files = fs.readdirSync(/*turbopackIgnore: true*/ DEMO_DIR).sort();
  const canIndex = embeddingStatus().configured;
  let seeded = 0;
  for (const demo of DEMO_ORGS) {
    const org = await findOrganization(demo.slug);
    if (!org) continue;
    const admin: Principal = { userId: `usr_${org.slug}_admin`, orgId: org.id, orgSlug: org.slug, orgName: org.name, role: "admin", locationIds: null, via: "session" };
    if ((await withTenant(admin, (tx) => tx.document.count())) > 0) continue;
    for (const filename of files) {
      const record = await invoke(createDocument, admin, { body: { filename, description: "Sample document loaded with the demo data", tags: ["demo"] } });
      const file = path.join(DEMO_DIR, filename);
      await uploadDocumentFile(admin, record.id, {
        body: Readable.toWeb(fs.createReadStream(/*turbopackIgnore: true*/ file)) as ReadableStream<Uint8Array>,
        declaredType: DOCUMENT_TYPES[record.extension].contentType,
        declaredLength: fs.statSync(/*turbopackIgnore: true*/ file).size,
        // Indexed right below (when a provider is usable), not queued.
        index: false,
      });
      // Without a usable embedding provider the files stay uploaded; an admin indexes them once it is configured.
      if (canIndex) await invoke(indexDocument, admin, { params: { id: record.id } });
    }
    seeded += 1;
  }
  return seeded;
}
