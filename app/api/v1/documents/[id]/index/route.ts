import { route } from "@/lib/api/route";
import { indexDocument, removeDocumentIndex } from "@/lib/documents/operations";

export const POST = route(indexDocument);
export const DELETE = route(removeDocumentIndex);
