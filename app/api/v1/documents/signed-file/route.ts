import { route } from "@/lib/api/route";
import { signedFile } from "@/lib/documents/operations";

export const GET = route(signedFile);
