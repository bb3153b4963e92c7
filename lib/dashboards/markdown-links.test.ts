import { describe, expect, it } from "vitest";
import { isExternal, safeUrl } from "./markdown-links";

describe("safeUrl", () => {
  it("keeps web, mail, in-app and anchor links", () => {
    for (const url of ["https://example.com/a?b=1", "http://example.com", "mailto:ops@example.com", "/dashboards/custom", "#notes"]) {
      expect(safeUrl(url)).toBe(url);
    }
  });

  it("drops script and data URLs in any spelling", () => {
    for (const url of ["javascript:alert(1)", "JavaScript:alert(1)", " javascript:alert(1)", "data:text/html;base64,PHNjcmlwdD4=", "vbscript:msgbox", "file:///etc/passwd", "java\tscript:alert(1)", "\u0001javascript:alert(1)"]) {
      expect(safeUrl(url)).toBe("");
    }
  });

  it("treats relative paths without a slash as unsafe rather than guessing", () => {
    expect(safeUrl("other-page")).toBe("");
  });
});

describe("isExternal", () => {
  it("is true for http(s) and protocol-relative links only", () => {
    expect(isExternal("https://example.com")).toBe(true);
    expect(isExternal("//example.com/x")).toBe(true);
    expect(isExternal("/local")).toBe(false);
    expect(isExternal(undefined)).toBe(false);
  });
});
