import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BREAKPOINT_WIDTHS } from "@/lib/dashboards/wiring";

// A container query cannot read a variable, so the grid's stylesheet spells the breakpoints' widths out.
const css = fs.readFileSync(path.join(import.meta.dirname, "dashboards.module.css"), "utf8");

describe("the grid's stylesheet", () => {
  it("switches to each width range's area at exactly the breakpoint widths the layout is computed for", () => {
    const queries = Object.fromEntries([...css.matchAll(/@container \(min-width: (\d+)px\) \{ \.cell \{ grid-area: var\(--area-(\w+)\); \} \}/g)].map((m) => [m[2], Number(m[1])]));
    expect(css).toMatch(/\.cell \{[^}]*grid-area: var\(--area-mobile\);/);
    expect({ mobile: 0, ...queries }).toEqual(BREAKPOINT_WIDTHS);
  });
});
