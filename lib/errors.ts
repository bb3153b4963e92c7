import type { z } from "zod";

/**
 * What can go wrong in Quarry's domain, said without HTTP. Services, pages, jobs and scripts throw these;
 * the route wrapper alone turns them into statuses (one table in lib/api/errors.ts).
 */

/** One validation problem, as FastAPI reports them: where, what, and a machine-readable type. */
export interface ValidationItem {
  loc: (string | number)[];
  msg: string;
  type: string;
  /** Manifest errors also carry the YAML position. */
  line?: number;
  column?: number;
}

export type ErrorKind =
  | "malformed"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "gone"
  | "too_large"
  | "unsupported_type"
  | "invalid"
  | "rate_limited"
  | "upstream_failed"
  | "unavailable"
  | "timed_out";

/** Registry symbol: the same in every bundled copy of this module. */
const DOMAIN_ERROR = Symbol.for("quarry.DomainError");

/**
 * The base of every error a caller is meant to see; anything else is a defect and reaches the
 * caller as a generic failure.
 *
 * `instanceof` is a brand check: Next.js bundles route handlers separately, so a process can hold
 * two copies of these classes, and a process singleton (the embedding providers, object storage)
 * throws the copy of the bundle that built it. A plain prototype check then fails (a 502 or 413
 * became a 500).
 */
export class DomainError extends Error {
  static readonly kind: ErrorKind | null = null;
  readonly [DOMAIN_ERROR] = true;
  readonly kind: ErrorKind;

  static [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== "object" || value === null || (value as Record<symbol, unknown>)[DOMAIN_ERROR] !== true) return false;
    return this.kind === null || (value as DomainError).kind === this.kind;
  }

  constructor(readonly detail: string | ValidationItem[]) {
    super(typeof detail === "string" ? detail : detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; "));
    this.kind = (new.target as typeof DomainError).kind ?? "malformed";
    this.name = new.target.name;
  }
}

/** The request cannot be read at all (not a validation problem of its content). */
export class Malformed extends DomainError {
  static readonly kind = "malformed";
}
export class Unauthenticated extends DomainError {
  static readonly kind = "unauthenticated";
}
export class Forbidden extends DomainError {
  static readonly kind = "forbidden";
}
export class NotFound extends DomainError {
  static readonly kind = "not_found";
}
export class Conflict extends DomainError {
  static readonly kind = "conflict";
}
/** Existed once and will not again (an expired link). */
export class Gone extends DomainError {
  static readonly kind = "gone";
}
export class TooLarge extends DomainError {
  static readonly kind = "too_large";
}
export class UnsupportedType extends DomainError {
  static readonly kind = "unsupported_type";
}
/** Well-formed input that breaks a rule: a list of items, or one sentence. */
export class Invalid extends DomainError {
  static readonly kind = "invalid";
}
export class RateLimited extends DomainError {
  static readonly kind = "rate_limited";
  constructor(
    readonly retryAfterSeconds: number,
    detail = `Too many requests; retry in ${retryAfterSeconds} s`,
  ) {
    super(detail);
  }
}
/** A service Quarry depends on (an embedding provider, the chat model) failed or answered nonsense. */
export class UpstreamFailed extends DomainError {
  static readonly kind = "upstream_failed";
}
/** Quarry itself cannot serve this now (starting, not configured, over its budget); a later try may work. */
export class Unavailable extends DomainError {
  static readonly kind = "unavailable";
  constructor(
    detail: string | ValidationItem[],
    /** When a later try is worth making (sent as Retry-After); unset when nobody knows. */
    readonly retryAfterSeconds?: number,
  ) {
    super(detail);
  }
}
/** The work, or a service it waited for, passed its time limit. */
export class TimedOut extends DomainError {
  static readonly kind = "timed_out";
}

export const unauthorized = (detail = "Not authenticated") => new Unauthenticated(detail);
export const forbidden = (detail = "Not allowed for your role") => new Forbidden(detail);
export const notFound = (what = "Resource") => new NotFound(`${what} not found`);
export const conflict = (detail: string) => new Conflict(detail);
export const unprocessable = (items: ValidationItem[] | string) => new Invalid(items);
export const tooManyRequests = (retryAfterSeconds: number) => new RateLimited(retryAfterSeconds);

/** zod's issues as validation items under `where` (`body`, `query`, `path`). */
export function zodIssuesToItems(where: string, error: z.ZodError): ValidationItem[] {
  return error.issues.map((issue) => ({
    loc: [where, ...issue.path.map((p) => (typeof p === "number" ? p : String(p)))],
    msg: issue.message,
    type: issue.code,
  }));
}
