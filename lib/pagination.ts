import { z } from "zod";

/*
 * The one pagination shape for every list endpoint (docs/conventions.md, "Lists"): `limit` (1–200,
 * default 50) and `offset` (≥ 0) query parameters; a `{ items, total, limit, offset }` body where
 * `total` counts every row the caller may see, not just this page. Client-safe: contracts import it.
 */

export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 200;

export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(PAGE_LIMIT_MAX).default(PAGE_LIMIT_DEFAULT).describe(`Items per page, 1–${PAGE_LIMIT_MAX}`),
  offset: z.coerce.number().int().min(0).default(0).describe("Items to skip"),
});
export type PageQuery = z.output<typeof pageQuery>;

/** The response body of a list of `item`. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    total: z.number().int().describe("Every item the caller may see, across pages"),
    limit: z.number().int(),
    offset: z.number().int(),
  });
}

/** A page as services return it. */
export function pageBody<T>(items: T[], total: number, query: PageQuery) {
  return { items, total, limit: query.limit, offset: query.offset };
}

/** Prisma's `skip`/`take` (SQL OFFSET/LIMIT) for a page. */
export function pageWindow(query: PageQuery) {
  return { skip: query.offset, take: query.limit };
}
