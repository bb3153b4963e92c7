import { route } from "@/lib/api/route";
import { indexDocument as indexEndpoint, removeDocumentIndex as removeIndexEndpoint } from "@/lib/documents/search-contract";
import { indexDocument } from "@/lib/documents/index-document";
import { removeDocumentIndex } from "@/lib/documents/remove-index";

export const POST = route(indexEndpoint, ({ principal, params, query }) => indexDocument(principal, params.id, { model: query.model }));
export const DELETE = route(removeIndexEndpoint, ({ principal, params }) => removeDocumentIndex(principal, params.id));
