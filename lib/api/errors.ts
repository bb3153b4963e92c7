/** One validation problem, as FastAPI reports them: where, what, and a machine-readable type. */
export interface ValidationItem {
  loc: (string | number)[];
  msg: string;
  type: string;
  /** Manifest errors also carry the YAML position. */
  line?: number;
  column?: number;
}

/**
 * The one error type services throw. The route wrapper turns it into
 * `{"detail": ...}` with `status`; anything else becomes a generic 500.
 */
export class ApiError extends Error {
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
