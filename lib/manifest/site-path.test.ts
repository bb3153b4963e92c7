import { describe, expect, it } from "vitest";
import { isSitePath } from "./site-path";

describe("isSitePath: a manifest link that stays on this site", () => {
  it.each(["/documents?location={location_id}", "/dashboards/custom/daily?tab=main", "/", "/a/./b/../c", "/x%20y", "/q?next=//evil.example"])("accepts %s", (link) => {
    expect(isSitePath(link)).toBe(true);
  });

  it.each([
    ["//evil.example/x", "protocol-relative"],
    ["/.//evil.example", "resolves to the path //evil.example"],
    ["/./../..//evil.example", "dot segments collapse to //evil.example"],
    ["/%2F%2Fevil.example", "decodes to //evil.example"],
    ["/%2f/evil.example", "decodes to //evil.example (lower case)"],
    ["/%252F%252Fevil.example", "decodes twice to //evil.example"],
    ["/\\evil.example", "a backslash is a slash to a browser"],
    ["/.\\/evil.example", "a backslash after a dot segment"],
    ["/%5Cevil.example", "decodes to /\\evil.example"],
    ["/%E0%A4%A", "a malformed escape"],
    ["https://evil.example/", "another origin"],
    ["javascript:alert(1)", "a script URL"],
    ["documents", "a relative path"],
  ])("refuses %s (%s)", (link) => {
    expect(isSitePath(link)).toBe(false);
  });
});
