import { route } from "@/lib/api/route";
import { downloadDocument } from "@/lib/documents/operations";

export const GET = route(downloadDocument);
