import { refuseMethod } from "@/lib/api/allowed-methods";
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

// This path bypasses the request gate (proxy.ts streams uploads), so it answers other methods itself.
export { refuseMethod as GET, refuseMethod as PUT, refuseMethod as PATCH, refuseMethod as DELETE };
