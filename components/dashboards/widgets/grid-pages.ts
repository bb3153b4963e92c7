import type { PageModule } from "tabulator-tables";

/**
 * Pages of a grouped Tabulator grid. Tabulator's local pagination cuts the display rows, group
 * headers included, into pages of `paginationSize`, so a grouped grid with `page_size: 25` shows
 * 24 rows under one header (fewer under several); its maintainer keeps that for even page
 * heights and it has no option to change it (tabulator issues #1955, #3643). A manifest's
 * page_size counts data rows, as a table widget's does: here page N holds data rows
 * (N-1)·size … N·size-1 and, around them, the group headers and calculation rows that go with
 * them.
 */

/** The kind of a display row, as Tabulator tags them. */
export type DisplayRowType = "row" | "group" | "calc" | string;

/**
 * The page index (0-based) of each display row, for pages of `size` data rows. A data row's page
 * follows from its position among data rows. A group header goes with the data row after it (a
 * collapsed group's header with the next shown row; trailing ones with the last page). A
 * calculation row goes with the data row before it when it closes a group (it follows a data or
 * closing calculation row), else with the data row after it (a group's top calculations).
 */
export function displayRowPages(types: readonly DisplayRowType[], size: number): number[] {
  const pages = new Array<number>(types.length);
  const dataRows = types.filter((t) => t === "row").length;
  const lastPage = Math.max(0, Math.ceil(dataRows / size) - 1);
  let seen = 0;
  let pending: number[] = [];
  let closing = false;
  for (let i = 0; i < types.length; i++) {
    if (types[i] === "row") {
      const page = Math.floor(seen / size);
      for (const j of pending) pages[j] = page;
      pending = [];
      pages[i] = page;
      seen++;
      closing = true;
    } else if (types[i] === "calc" && closing) {
      pages[i] = Math.floor((seen - 1) / size);
    } else {
      pending.push(i);
      closing = false;
    }
  }
  for (const j of pending) pages[j] = lastPage;
  return pages;
}

interface DisplayRow {
  type: DisplayRowType;
}

/** What the subclass uses of Tabulator's Page module (not in its type declarations). */
interface PageInternals {
  mode: string;
  size: number | true;
  page: number;
  table: { options: { groupBy?: unknown } };
  setMaxRows(rowCount: number): void;
  _setPageButtons(): void;
  _setPageCounter(totalRows: number, size?: number, currentRow?: number): void;
  getRows(data: DisplayRow[]): DisplayRow[];
}

/**
 * Tabulator's Page module with pages of data rows when the grid is grouped (unchanged otherwise).
 * Registered with `TabulatorFull.registerModule`, it replaces the module of the same name.
 */
export function groupAwarePageModule(Base: typeof PageModule): typeof PageModule {
  const Page = Base as unknown as new (table: unknown) => PageInternals;
  class GroupAwarePage extends Page {
    static moduleName = "page";

    getRows(data: DisplayRow[]): DisplayRow[] {
      if (this.mode !== "local" || !this.table.options.groupBy || this.size === true) return super.getRows(data);
      const size = Number(this.size);
      const dataRows = data.filter((row) => row.type === "row").length;
      this.setMaxRows(dataRows);
      this._setPageButtons();
      const pages = displayRowPages(
        data.map((row) => row.type),
        size,
      );
      const output = data.filter((_, i) => pages[i] === this.page - 1);
      const first = size * (this.page - 1);
      const shown = Math.max(0, Math.min(size, dataRows - first));
      this._setPageCounter(dataRows, shown, shown > 0 ? first + 1 : 0);
      return output;
    }
  }
  return GroupAwarePage as unknown as typeof PageModule;
}
