/** Under a list that shows one page of a longer one (every list answers `{ items, total, limit, offset }`). */
export function PageNote({ page, what }: { page: { items: unknown[]; total: number; offset: number }; what: string }) {
  if (page.offset === 0 && page.items.length >= page.total) return null;
  const first = page.items.length === 0 ? 0 : page.offset + 1;
  return (
    <p className="muted" data-testid="page-note">
      Showing {what} {first}–{page.offset + page.items.length} of {page.total}; the API pages through all of them (<code>limit</code>, <code>offset</code>).
    </p>
  );
}
