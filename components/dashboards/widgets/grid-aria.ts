/**
 * Repairs the ARIA structure Tabulator 6 builds, which axe-core reports as `aria-required-children`
 * (critical): its `grid` holds a focusable scroll box (the table holder, tabindex 0) that has no
 * grid role, and a grouped grid's group headers are `rowgroup`s holding no `row` (their rows are
 * their siblings) inside another `rowgroup`. After the repair the holder is the body's `rowgroup`
 * (the element inside it is presentational) and each group header is a `row` whose content sits in
 * one `gridcell` spanning every column (`display: contents`, so nothing moves on screen). The
 * pager is rendered outside the grid (`paginationElement`), since a grid may own no buttons.
 *
 * Idempotent: Tabulator rebuilds group headers whenever groups change, so the grid widget calls it
 * again on every change of the grid's DOM (`watchGridAria`).
 */
export function repairGridAria(root: HTMLElement): void {
  const holder = root.querySelector<HTMLElement>(":scope > .tabulator-tableholder");
  if (holder && holder.getAttribute("role") !== "rowgroup") holder.setAttribute("role", "rowgroup");
  const body = holder?.querySelector<HTMLElement>(":scope > .tabulator-table");
  if (body && body.getAttribute("role") !== "none") body.setAttribute("role", "none");
  const columns = String(Math.max(1, root.querySelectorAll(".tabulator-headers > .tabulator-col").length));
  for (const group of root.querySelectorAll<HTMLElement>(".tabulator-row.tabulator-group")) {
    if (group.getAttribute("role") !== "row") group.setAttribute("role", "row");
    let cell = group.querySelector<HTMLElement>(":scope > [data-group-cell]");
    if (!cell) {
      cell = document.createElement("div");
      cell.dataset.groupCell = "";
      cell.setAttribute("role", "gridcell");
      cell.style.display = "contents";
      group.appendChild(cell);
    }
    if (cell.getAttribute("aria-colspan") !== columns) cell.setAttribute("aria-colspan", columns);
    for (const child of [...group.childNodes]) if (child !== cell) cell.appendChild(child);
  }
}

/** Repairs now and after every change of the grid's rows; returns the function that stops watching. */
export function watchGridAria(root: HTMLElement): () => void {
  repairGridAria(root);
  // The repair's own changes trigger one more call, which then finds nothing to change.
  const observer = new MutationObserver(() => repairGridAria(root));
  observer.observe(root, { childList: true, subtree: true });
  return () => observer.disconnect();
}
