import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { textChange } from "./text-change";

describe("textChange", () => {
  it("is the one stretch that differs: applied to the old text it gives the new one, and touches nothing around it", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), fc.string(), (prefix, removed, inserted, suffix) => {
        const before = prefix + removed + suffix;
        const after = prefix + inserted + suffix;
        const change = textChange(before, after);
        if (before === after) {
          expect(change).toBeNull();
          return;
        }
        const { from, to, insert } = change!;
        expect(before.slice(0, from) + insert + before.slice(to)).toBe(after);
        expect(to - from).toBeLessThanOrEqual(removed.length);
        expect(insert.length).toBeLessThanOrEqual(inserted.length);
      }),
    );
  });

  it("turns a layout number's edit into a change of that number only", () => {
    expect(textChange("layout: { x: 0, y: 1, w: 3, h: 2 }", "layout: { x: 0, y: 1, w: 12, h: 2 }")).toEqual({ from: 25, to: 26, insert: "12" });
  });
});
