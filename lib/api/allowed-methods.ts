import { NextResponse, type NextRequest } from "next/server";
import { literalSegments, pathPattern } from "@/lib/path-template";
import { noEndpointResponse } from "./errors";
import { ENDPOINTS } from "./registry";

interface PathMethods {
  pattern: RegExp;
  /** Segments without a placeholder: Next's router prefers `_seed` to `{id}`, and so do we. */
  literalSegments: number;
  methods: Set<string>;
}

const TABLE: PathMethods[] = (() => {
  const byPath = new Map<string, Set<string>>();
  for (const endpoint of ENDPOINTS) {
    const methods = byPath.get(endpoint.path) ?? new Set<string>();
    methods.add(endpoint.method.toUpperCase());
    byPath.set(endpoint.path, methods);
  }
  return [...byPath].map(([path, methods]) => ({
    pattern: pathPattern(path),
    literalSegments: literalSegments(path),
    methods,
  }));
})();

/**
 * The methods the API serves at `pathname`, or null when no endpoint lives there (the catch-all
 * answers 404 then). The request gate uses it to answer a wrong method with 405 and a detail,
 * where Next.js would send an empty 405.
 */
export function allowedMethods(pathname: string): string[] | null {
  const matches = TABLE.filter((entry) => entry.pattern.test(pathname));
  if (matches.length === 0) return null;
  const mostLiteral = Math.max(...matches.map((m) => m.literalSegments));
  const methods = new Set(matches.filter((m) => m.literalSegments === mostLiteral).flatMap((m) => [...m.methods]));
  return [...methods].sort();
}

/**
 * 405 with `Allow` and a detail for a method no endpoint serves at an existing API path, or null
 * when the method is served there (or the path is unknown, or it is a CORS preflight).
 */
export function methodNotAllowed(method: string, pathname: string, requestId?: string): NextResponse | null {
  if (!pathname.startsWith("/api/v1/") || method === "OPTIONS") return null;
  const allowed = allowedMethods(pathname);
  if (!allowed || allowed.includes(method === "HEAD" ? "GET" : method)) return null;
  return NextResponse.json(
    { detail: `Method ${method} is not allowed on ${pathname}; allowed: ${allowed.join(", ")}` },
    { status: 405, headers: { Allow: allowed.join(", "), ...(requestId ? { "X-Request-Id": requestId } : {}) } },
  );
}

/**
 * Exported as the other methods of a route file the request gate does not see (the upload path,
 * left out of proxy.ts's matcher so large bodies stream): without it Next answers an empty 405.
 */
export async function refuseMethod(req: NextRequest): Promise<Response> {
  const requestId = req.headers.get("x-request-id") ?? crypto.randomUUID();
  return methodNotAllowed(req.method, req.nextUrl.pathname, requestId) ?? noEndpointResponse(req.method, req.nextUrl.pathname, requestId);
}
