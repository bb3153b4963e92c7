import { route } from "@/lib/api/route";
import { getIndexStatus, indexDocument, removeDocumentIndex } from "@/lib/documents/operations";

export const GET = route(getIndexStatus);
export const POST = route(indexDocument);
export const DELETE = route(removeDocumentIndex);
