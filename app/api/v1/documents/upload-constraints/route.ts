import { route } from "@/lib/api/route";
import { getUploadConstraints } from "@/lib/documents/contract";
import { uploadConstraints } from "@/lib/documents/documents";

export const GET = route(getUploadConstraints, async () => uploadConstraints());
