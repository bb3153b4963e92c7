import { beforeAll, describe, expect, it } from "vitest";
import { type DisplayRowType, displayRowPages, groupAwarePageModule } from "./grid-pages";

/** Display rows of a grid grouped into groups of the given sizes (0: a collapsed group, header only). */
function grouped(sizes: number[], calcs: { top?: boolean; bottom?: boolean } = {}): DisplayRowType[] {
  return sizes.flatMap((n) => ["group", ...(calcs.top ? ["calc"] : []), ...Array<DisplayRowType>(n).fill("row"), ...(calcs.bottom && n > 0 ? ["calc"] : [])]);
}

function pageContents(types: DisplayRowType[], size: number): DisplayRowType[][] {
  const pages = displayRowPages(types, size);
  const out: DisplayRowType[][] = [];
  types.forEach((type, i) => (out[pages[i]] ??= []).push(type));
  return out;
}

describe("pages of a grouped grid count data rows only", () => {
  it("shows 25 data rows on a page of 25, with the header of the group they start", () => {
    const pages = pageContents(grouped([30, 30]), 25);
    expect(pages.map((p) => p.filter((t) => t === "row").length)).toEqual([25, 25, 10]);
    expect(pages[0]).toEqual(["group", ...Array(25).fill("row")]);
    // The first group goes on (5 rows), the second starts with its header.
    expect(pages[1]).toEqual([...Array(5).fill("row"), "group", ...Array(20).fill("row")]);
  });

  it("keeps many small groups' headers with their rows, every page full", () => {
    const pages = pageContents(grouped(Array(20).fill(3)), 25);
    expect(pages.map((p) => p.filter((t) => t === "row").length)).toEqual([25, 25, 10]);
    expect(pages.flat()).toEqual(grouped(Array(20).fill(3)));
  });

  it("puts collapsed groups' headers before the next shown row, trailing ones on the last page", () => {
    const types = grouped([0, 2, 0, 0]);
    // group group row | row group group
    expect(displayRowPages(types, 1)).toEqual([0, 0, 0, 1, 1, 1]);
    expect(displayRowPages(grouped([0, 0]), 25)).toEqual([0, 0]);
  });

  it("keeps a group's top calculations with its first rows and its bottom ones with its last", () => {
    const types = grouped([2, 2], { top: true, bottom: true });
    // group calc row row calc | group calc row row calc
    expect(displayRowPages(types, 2)).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
    expect(displayRowPages(types, 3)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
  });
});

describe("the Page module that replaces Tabulator's", () => {
  let Page: new () => { getRows(data: { type: string }[]): { type: string }[] };
  const counters: unknown[][] = [];

  beforeAll(async () => {
    // Tabulator builds a row template from `document` when it loads; nothing here renders.
    const anything = (): unknown => new Proxy(function () {}, { get: (_t, key) => (key === Symbol.toPrimitive ? () => "" : anything()), apply: () => anything(), construct: () => anything() as object });
    globalThis.document ??= anything() as Document;
    const { PageModule } = await import("tabulator-tables");
    const Module = groupAwarePageModule(PageModule);
    expect((Module as unknown as { moduleName: string }).moduleName).toBe("page");
    // An instance without a table: only the state getRows reads.
    Page = function (this: Record<string, unknown>) {
      Object.assign(this, { mode: "local", size: 25, page: 1, max: 1, table: { options: { groupBy: "category" } }, _setPageButtons() {}, _setPageCounter: (...args: unknown[]) => counters.push(args) });
    } as unknown as typeof Page;
    Page.prototype = Object.create(Module.prototype);
  });

  it("hands each page 25 data rows when grouped, and counts rows for the page counter", () => {
    const page = new Page() as InstanceType<typeof Page> & { page: number; max: number };
    const data = grouped([30, 30]).map((type) => ({ type }));
    expect(page.getRows(data).filter((r) => r.type === "row")).toHaveLength(25);
    expect(page.max).toBe(3);
    expect(counters.at(-1)).toEqual([60, 25, 1]);
    page.page = 3;
    expect(page.getRows(data).map((r) => r.type)).toEqual(Array(10).fill("row"));
    expect(counters.at(-1)).toEqual([60, 10, 51]);
  });

  it("leaves an ungrouped grid to Tabulator's own pages", () => {
    const page = new Page() as InstanceType<typeof Page> & { table: { options: { groupBy?: unknown } }; pageCounter: unknown };
    page.table.options.groupBy = undefined;
    page.pageCounter = null;
    const data = Array.from({ length: 30 }, () => ({ type: "row" }));
    expect(page.getRows(data)).toHaveLength(25);
  });
});
