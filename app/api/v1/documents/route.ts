import { route } from "@/lib/api/route";
import { createDocument, listDocuments } from "@/lib/documents/contract";
import { createDocumentFor, listDocumentsFor } from "@/lib/documents/documents";

export const GET = route(listDocuments, ({ principal, query }) => listDocumentsFor(principal, query));
export const POST = route(createDocument, ({ principal, body }) => createDocumentFor(principal, body));
