import { route } from "@/lib/api/route";
import { previewUpload } from "@/lib/data/operations";

export const GET = route(previewUpload);
