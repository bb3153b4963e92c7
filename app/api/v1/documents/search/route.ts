import { route } from "@/lib/api/route";
import { searchDocuments } from "@/lib/documents/operations";

export const POST = route(searchDocuments);
