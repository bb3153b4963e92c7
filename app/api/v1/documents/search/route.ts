import { route } from "@/lib/api/route";
import { searchDocumentsEndpoint } from "@/lib/documents/search-contract";
import { searchDocuments } from "@/lib/documents/search";

export const POST = route(searchDocumentsEndpoint, ({ principal, body }) => searchDocuments(principal, body));
