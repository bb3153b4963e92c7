import { route } from "@/lib/api/route";
import { uploadDocument } from "@/lib/documents/contract";
import { uploadDocumentFile } from "@/lib/documents/upload";

export const POST = route(uploadDocument, ({ req, principal, params, query }) => {
  const length = req.headers.get("content-length");
  return uploadDocumentFile(principal, params.id, {
    body: req.body,
    declaredType: req.headers.get("content-type"),
    declaredLength: length !== null && /^\d+$/.test(length) ? Number(length) : null,
    filename: query.filename,
  });
});
