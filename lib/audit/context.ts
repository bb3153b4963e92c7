import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The request an audited change came from, as the endpoint wrapper (lib/api/route.ts) resolved it: the caller's
 * address with the trusted proxies honoured (lib/security/caller.ts). Carried by the async context, so services keep
 * their signatures and a change made outside a request (a job, a command) records no address.
 */
export interface AuditRequest {
  address: string | null;
}

const requests = new AsyncLocalStorage<AuditRequest>();

/** Runs `work` with the request's audit context; what recordAudit writes inside it names this address. */
export function withAuditRequest<T>(request: AuditRequest, work: () => T): T {
  return requests.run(request, work);
}

export function currentAuditRequest(): AuditRequest | undefined {
  return requests.getStore();
}
