import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { toJsonValue } from "@/lib/json";
import { currentPagePrincipal } from "@/lib/auth/session";
import { DocumentList, UploadConstraints } from "@/lib/documents/contract";
import { listDocumentsFor, uploadConstraints } from "@/lib/documents/documents";
import { embeddingConfigFor } from "@/lib/documents/embedding-config";
import { EmbeddingConfig } from "@/lib/documents/search-contract";
import { DocumentsClient } from "@/components/documents/documents-client";
import { SearchPanel } from "@/components/documents/search-panel";

export const metadata: Metadata = { title: "Documents" };

/** First page of the list, rendered on the server; the client keeps it fresh. */
const PAGE_SIZE = 100;

export default async function DocumentsPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  const list = await listDocumentsFor(principal, { limit: PAGE_SIZE, offset: 0 });
  const canManage = principal.role === "admin";
  // Read at start like every provider setting (SPEC §2.9): the page shows what this server process will use.
  const embedding = EmbeddingConfig.parse(toJsonValue(await embeddingConfigFor(principal)));
  return (
    <div className="page">
      <h1>Documents</h1>
      <p className="muted">
        {canManage
          ? "Upload PDF, Word, text and CSV files for your organization, index them, and search them here or ask about them in Chat."
          : "Search your organization's documents. Only admins can upload, index or delete."}
      </p>
      <DocumentsClient
        initial={DocumentList.parse(toJsonValue(list))}
        constraints={UploadConstraints.parse(uploadConstraints())}
        canManage={canManage}
        pageSize={PAGE_SIZE}
        searchPanel={<SearchPanel embedding={embedding} />}
        embedding={embedding}
      />
    </div>
  );
}
