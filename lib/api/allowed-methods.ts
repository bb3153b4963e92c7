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
    pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}/?$`),
    literalSegments: path.split("/").filter((s) => s && !s.startsWith("{")).length,
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
