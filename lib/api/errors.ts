import { DomainError, RateLimited, Unavailable, type ErrorKind } from "@/lib/errors";

/** The one place a domain error becomes an HTTP status. */
const HTTP_STATUS: Record<ErrorKind, number> = {
  malformed: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_large: 413,
  unsupported_type: 415,
  invalid: 422,
  rate_limited: 429,
  upstream_failed: 502,
  unavailable: 503,
  timed_out: 504,
};

/** The status a domain error answers with; null for anything else (a defect: 500). */
export function httpStatusOf(error: unknown): number | null {
  return error instanceof DomainError ? HTTP_STATUS[error.kind] : null;
}

/** What the caller receives for a domain error: status, `detail` and the headers its kind calls for. */
export function httpViewOf(error: DomainError): { status: number; detail: DomainError["detail"]; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  if (error.kind === "unauthenticated") headers["WWW-Authenticate"] = "Bearer";
  if (error instanceof RateLimited || error instanceof Unavailable) {
    if (error.retryAfterSeconds !== undefined) headers["Retry-After"] = String(error.retryAfterSeconds);
  }
  return { status: HTTP_STATUS[error.kind], detail: error.detail, headers };
}

/** `{"detail": …}` with the status and headers of `httpViewOf`. */
export function domainErrorResponse(error: DomainError): Response {
  const { status, detail, headers } = httpViewOf(error);
  return Response.json({ detail }, { status, headers });
}
