import { config } from "@/lib/config";
import { clientAddress } from "./client-address";

/** The caller's network address (lib/security/client-address.ts); "unknown" (one shared bucket) when the socket is not known. */
export function callerAddress(req: Request): string {
  return callerAddressFromHeaders(req.headers);
}

export function callerAddressFromHeaders(headers: Headers): string {
  return clientAddress(headers, config().api.trustedProxies) ?? "unknown";
}
