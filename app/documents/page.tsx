import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { invoke } from "@/lib/operation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { getEmbeddingConfig, getUploadConstraints, listDocuments } from "@/lib/documents/operations";
import { DocumentsClient } from "@/components/documents/documents-client";
import { SearchPanel } from "@/components/documents/search-panel";

export const metadata: Metadata = { title: "Documents" };

/** First page of the list, rendered on the server; the client keeps it fresh. */
const PAGE_SIZE = 100;

export default async function DocumentsPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  const [list, constraints, embedding] = await Promise.all([
    invoke(listDocuments, principal, { query: { limit: PAGE_SIZE, offset: 0 } }),
    invoke(getUploadConstraints, principal),
    // Read at start like every provider setting (SPEC §2.9): the page shows what this server process will use.
    invoke(getEmbeddingConfig, principal),
  ]);
  const canManage = principal.role === "admin";
  return (
    <div className="page">
      <h1>Documents</h1>
      <p className="muted">
        {canManage
          ? "Upload PDF, Word, text and CSV files for your organization, index them, and search them here or ask about them in Chat."
          : "Search your organization's documents. Only admins can upload, index or delete."}
      </p>
      <DocumentsClient
        initial={list}
        constraints={constraints}
        canManage={canManage}
        pageSize={PAGE_SIZE}
        searchPanel={<SearchPanel embedding={embedding} />}
        embedding={embedding}
      />
    </div>
  );
}
