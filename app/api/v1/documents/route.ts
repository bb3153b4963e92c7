import { route } from "@/lib/api/route";
import { createDocument, listDocuments } from "@/lib/documents/operations";

export const GET = route(listDocuments);
export const POST = route(createDocument);
