import { describe, expect, it } from "vitest";
import { safeCallbackPath, safeRedirectUrl } from "./callback-url";

const ORIGIN = "http://localhost:3000";

/** Where a browser on ORIGIN ends up when a page assigns `location` to `target` (WHATWG URL parsing, as Chromium does). */
const landsOn = (target: string) => new URL(target, `${ORIGIN}/signin`).origin;

describe("callbackUrl after sign-in stays on this origin", () => {
  it.each([
    ["a page", "/dashboards/custom", "/dashboards/custom"],
    ["a page with query and fragment", "/dashboards/custom/sales?region=west#top", "/dashboards/custom/sales?region=west#top"],
    ["home", "/", "/"],
    ["an absolute URL of this origin", `${ORIGIN}/documents?q=1`, "/documents?q=1"],
    ["a relative path", "documents", "/documents"],
    ["dot segments inside the site", "/a/../documents", "/documents"],
    ["an escaped character that is not a separator", "/documents?q=50%25", "/documents?q=50%25"],
    // An escaped scheme is no scheme: it names a (missing) page of this site.
    ["javascript%3Aalert(1), a relative path", "javascript%3Aalert(1)", "/javascript%3Aalert(1)"],
  ])("keeps %s", (_name, value, expected) => {
    expect(safeCallbackPath(value, ORIGIN)).toBe(expected);
  });

  it.each([
    ["/\\evil.example/ (issue 26, as Next.js decodes /%5Cevil.example/)", "/\\evil.example/"],
    ["/%5Cevil.example/ still encoded", "/%5Cevil.example/"],
    ["/%5cevil.example/ lower-case escape", "/%5cevil.example/"],
    ["/%255Cevil.example/ encoded twice", "/%255Cevil.example/"],
    ["/<TAB>/evil.example/ (issue 26, as Next.js decodes /%09/evil.example/)", "/\t/evil.example/"],
    ["/%09/evil.example/ still encoded", "/%09/evil.example/"],
    ["/<LF>/evil.example/", "/\n/evil.example/"],
    ["/%0D%0A/evil.example/", "/%0D%0A/evil.example/"],
    ["/<NUL>/evil.example/", "/\u0000/evil.example/"],
    ["a C1 control", "/\u0085/evil.example/"],
    ["https://evil.example", "https://evil.example"],
    ["https://evil.example/ with a path", "https://evil.example/dashboards"],
    ["//evil.example", "//evil.example"],
    ["///evil.example", "///evil.example"],
    ["/\\evil", "/\\evil"],
    ["\\\\evil.example", "\\\\evil.example"],
    ["/.//evil.example (parses to the path //evil.example)", "/.//evil.example"],
    ["javascript:alert(1)", "javascript:alert(1)"],
    ["JavaScript:alert(1) mixed case", "JavaScript:alert(1)"],
    ["data:text/html,<script>", "data:text/html,<script>alert(1)</script>"],
    ["http://localhost:3000@evil.example/", `${ORIGIN}@evil.example/`],
    ["credentials on this origin", "http://user:pass@localhost:3000/"],
    ["another port of this host", "http://localhost:3001/"],
    ["https on this host", "https://localhost:3000/"],
    ["an empty string", ""],
    ["a non-string", ["/documents"]],
    ["a very long value", `/${"a".repeat(5000)}`],
  ])("sends %s home", (_name, value) => {
    expect(safeCallbackPath(value, ORIGIN)).toBe("/");
  });

  it("every answer is a path a browser resolves to this origin", () => {
    const values = ["/\\evil.example/", "/\t/evil.example/", "//evil.example", "/.//evil.example", "https://evil.example", "/ok", `${ORIGIN}/x`];
    for (const value of values) {
      const path = safeCallbackPath(value, ORIGIN);
      expect(path.startsWith("/") && !path.startsWith("//"), `${JSON.stringify(value)} -> ${path}`).toBe(true);
      expect(landsOn(path)).toBe(ORIGIN);
    }
    // The check can fail: the raw payloads do leave the origin when a browser follows them.
    expect(landsOn("/\\evil.example/")).toBe("http://evil.example");
    expect(landsOn("/\t/evil.example/")).toBe("http://evil.example");
  });

  it("next-auth's redirect callback answers absolute URLs on its base URL", () => {
    expect(safeRedirectUrl("/dashboards/custom", ORIGIN)).toBe(`${ORIGIN}/dashboards/custom`);
    expect(safeRedirectUrl(`${ORIGIN}/documents`, ORIGIN)).toBe(`${ORIGIN}/documents`);
    expect(safeRedirectUrl("https://evil.example/x", ORIGIN)).toBe(`${ORIGIN}/`);
    expect(safeRedirectUrl("/\\evil.example/", ORIGIN)).toBe(`${ORIGIN}/`);
    expect(safeRedirectUrl("/%09/evil.example/", ORIGIN)).toBe(`${ORIGIN}/`);
    expect(safeRedirectUrl("not a url at all \\", ORIGIN)).toBe(`${ORIGIN}/`);
  });
});

describe("next-auth's own routes use the same rule", () => {
  it.each([
    ["/\\evil.example/", `${ORIGIN}/`],
    ["/%5Cevil.example/", `${ORIGIN}/`],
    ["/\t/evil.example/", `${ORIGIN}/`],
    ["/%09/evil.example/", `${ORIGIN}/`],
    ["https://evil.example", `${ORIGIN}/`],
    ["//evil.example", `${ORIGIN}/`],
    ["javascript:alert(1)", `${ORIGIN}/`],
    ["/dashboards/custom", `${ORIGIN}/dashboards/custom`],
  ])("a sign-in with callbackUrl %j is sent to %s", async (callbackUrl, expected) => {
    const { NextAuthBrowser } = await import("@/test/support/next-auth-driver");
    const browser = new NextAuthBrowser(ORIGIN);
    const answer = await browser.signIn("admin@acme.test", "quarry-demo", callbackUrl);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ url: expected });
    expect(browser.sessionToken()).toBeTruthy();
  });
});
