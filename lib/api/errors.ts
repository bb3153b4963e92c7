/** One validation problem, as FastAPI reports them: where, what, and a machine-readable type. */
export interface ValidationItem {
  loc: (string | number)[];
  msg: string;
  type: string;
  /** Manifest errors also carry the YAML position. */
  line?: number;
  column?: number;
}

/** Registry symbol: the same in every bundled copy of this module. */
const API_ERROR = Symbol.for("quarry.ApiError");

/**
 * The one error type services throw. The route wrapper turns it into
 * `{"detail": ...}` with `status`; anything else becomes a generic 500.
 *
 * `instanceof ApiError` is a brand check: Next.js bundles route handlers separately, so a
 * process can hold two copies of this class, and a globalThis singleton (the embedding
 * providers, object storage) throws the copy of the bundle that built it. A plain prototype
 * check then fails and a 502 or 413 became a 500.
 */
export class ApiError extends Error {
  readonly [API_ERROR] = true;

  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[API_ERROR] === true;
  }

  constructor(
    readonly status: number,
    readonly detail: string | ValidationItem[],
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === "string" ? detail : detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; "));
    this.name = "ApiError";
  }
}

export const badRequest = (detail: string) => new ApiError(400, detail);
export const unauthorized = (detail = "Not authenticated") => new ApiError(401, detail, { "WWW-Authenticate": "Bearer" });
export const forbidden = (detail = "Not allowed for your role") => new ApiError(403, detail);
export const notFound = (what = "Resource") => new ApiError(404, `${what} not found`);
export const conflict = (detail: string) => new ApiError(409, detail);
export const unprocessable = (items: ValidationItem[]) => new ApiError(422, items);
export const tooManyRequests = (retryAfterSeconds: number) =>
  new ApiError(429, `Too many requests; retry in ${retryAfterSeconds} s`, { "Retry-After": String(retryAfterSeconds) });
