import { route } from "@/lib/api/route";
import { getUploadConstraints } from "@/lib/documents/operations";

export const GET = route(getUploadConstraints);
