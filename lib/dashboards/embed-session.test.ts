import { describe, expect, it } from "vitest";
import { EXPIRY_WARNING_MS, fromAllowedParent, offeredToken, tokenExpiry, warningDelay } from "./embed-session";

describe("embed token renewal messages", () => {
  it("warns a minute before expiry, or half-way through a shorter life", () => {
    expect(warningDelay(0, 10 * 60_000)).toBe(10 * 60_000 - EXPIRY_WARNING_MS);
    expect(warningDelay(0, 30_000)).toBe(15_000);
    expect(warningDelay(5_000, 1_000)).toBe(0);
  });

  it("takes a token only from the framing page on an allowed origin", () => {
    const parent = {};
    expect(fromAllowedParent({ origin: "https://partner.example", source: parent }, parent, ["https://partner.example"])).toBe(true);
    expect(fromAllowedParent({ origin: "https://evil.example", source: parent }, parent, ["https://partner.example"])).toBe(false);
    expect(fromAllowedParent({ origin: "https://partner.example", source: {} }, parent, ["https://partner.example"])).toBe(false);
    // No allowed origin: the embed talks to no one.
    expect(fromAllowedParent({ origin: "https://partner.example", source: parent }, parent, [])).toBe(false);
  });

  it("reads only well-formed token messages", () => {
    expect(offeredToken({ type: "quarry:token", token: "aaaa.bbbb.cccc" })).toBe("aaaa.bbbb.cccc");
    expect(offeredToken({ type: "quarry:token", token: 42 })).toBeNull();
    expect(offeredToken({ type: "other", token: "aaaa.bbbb.cccc" })).toBeNull();
    expect(offeredToken("quarry:token")).toBeNull();
  });

  it("reads a token's exp without trusting it for anything but the schedule", () => {
    const payload = Buffer.from(JSON.stringify({ exp: 1_800_000_000, dsh: "x" })).toString("base64url");
    expect(tokenExpiry(`e30.${payload}.sig`)?.toISOString()).toBe(new Date(1_800_000_000_000).toISOString());
    expect(tokenExpiry("not-a-token")).toBeNull();
    expect(tokenExpiry("a.%%%.c")).toBeNull();
  });
});
