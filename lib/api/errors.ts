import { Conflict, DomainError, NotFound, RateLimited, TimedOut, Unavailable, type ErrorKind } from "@/lib/errors";

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

/**
 * Database errors that mean something to the caller, by their code (Prisma's, then PostgreSQL's SQLSTATE),
 * as the domain error they are: mapped once here rather than in each route or service.
 */
const DATABASE_ERRORS: Readonly<Record<string, () => DomainError>> = {
  P2002: () => new Conflict("A record with the same unique value already exists"),
  "23505": () => new Conflict("A record with the same unique value already exists"),
  P2025: () => new NotFound("Resource not found"),
  "57014": () => new TimedOut("The query ran longer than its time limit"),
};

/** The domain error an error is, or stands for (a known database error); null for anything else (a defect: 500). */
export function asDomainError(error: unknown): DomainError | null {
  if (error instanceof DomainError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && Object.hasOwn(DATABASE_ERRORS, code) ? DATABASE_ERRORS[code]() : null;
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

/** The one answer for a path or method no endpoint serves under /api: 404 with a detail pointing at /docs, never Next's HTML page. */
export function noEndpointResponse(method: string, pathname: string, requestId?: string): Response {
  return Response.json({ detail: `No endpoint ${method} ${pathname}; see /docs` }, { status: 404, headers: requestId ? { "X-Request-Id": requestId } : {} });
}
