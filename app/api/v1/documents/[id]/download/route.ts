import { route } from "@/lib/api/route";
import { downloadDocument } from "@/lib/documents/contract";
import { createDownloadLink } from "@/lib/documents/download";

export const GET = route(downloadDocument, ({ principal, params, query }) => createDownloadLink(principal, params.id, query.disposition));
