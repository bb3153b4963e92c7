import { route } from "@/lib/api/route";
import { deleteDocument, getDocument } from "@/lib/documents/contract";
import { deleteDocumentFor, getDocumentFor } from "@/lib/documents/documents";

export const GET = route(getDocument, ({ principal, params }) => getDocumentFor(principal, params.id));
export const DELETE = route(deleteDocument, ({ principal, params }) => deleteDocumentFor(principal, params.id));
