import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { toJsonValue } from "@/lib/api/json";
import { currentPagePrincipal } from "@/lib/auth/session";
import { DocumentList, UploadConstraints } from "@/lib/documents/contract";
import { listDocumentsFor, uploadConstraints } from "@/lib/documents/documents";
import { DocumentsClient } from "@/components/documents/documents-client";

export const metadata: Metadata = { title: "Documents" };

/** First page of the list, rendered on the server; the client keeps it fresh. */
const PAGE_SIZE = 100;

export default async function DocumentsPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  const list = await listDocumentsFor(principal, { limit: PAGE_SIZE, offset: 0 });
  const canManage = principal.role === "admin";
  return (
    <div className="page">
      <h1>Documents</h1>
      <p className="muted">
        {canManage ? "Upload PDF, Word, text and CSV files for your organization, then index them for search." : "Your organization's documents. Only admins can upload or delete."}
      </p>
      <DocumentsClient
        initial={DocumentList.parse(toJsonValue(list))}
        constraints={UploadConstraints.parse(uploadConstraints())}
        canManage={canManage}
        pageSize={PAGE_SIZE}
        // Slot for document search (issue 7): pass its panel component here.
        searchPanel={null}
      />
    </div>
  );
}
