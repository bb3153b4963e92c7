/**
 * OpenAPI path templates (`/api/v1/custom-dashboards/{id}/embeds/{embed_id}`): the one reading of their
 * `{placeholders}`, for the route wrapper (does a request match its endpoint), the request gate (which
 * methods a path has), the browser client and the tests (a URL from a template). Framework-free and
 * dependency-free, so the browser bundle can import it.
 */

const PLACEHOLDER = /\{(\w+)\}/g;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A RegExp matching the paths of `template`: each placeholder one non-empty segment, a trailing slash allowed. */
export function pathPattern(template: string): RegExp {
  return new RegExp(`^${template.split(/\{\w+\}/).map(escapeRegExp).join("[^/]+")}/?$`);
}

/** `template` with each placeholder replaced by `valueOf(name)`, URL-encoded. */
export function fillPath(template: string, valueOf: (name: string) => string): string {
  return template.replace(PLACEHOLDER, (_, name: string) => encodeURIComponent(valueOf(name)));
}

/** How many of the template's segments are literal (no placeholder): a path router prefers `_seed` to `{id}`. */
export function literalSegments(template: string): number {
  return template.split("/").filter((segment) => segment && !segment.startsWith("{")).length;
}
