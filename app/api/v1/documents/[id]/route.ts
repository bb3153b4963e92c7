import { route } from "@/lib/api/route";
import { deleteDocument, getDocument } from "@/lib/documents/operations";

export const GET = route(getDocument);
export const DELETE = route(deleteDocument);
