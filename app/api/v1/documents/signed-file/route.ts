import { route } from "@/lib/api/route";
import { signedFile } from "@/lib/documents/contract";
import { openSignedFile } from "@/lib/documents/download";

export const GET = route(signedFile, ({ query }) => openSignedFile(query));
