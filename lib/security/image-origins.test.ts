import { describe, expect, it } from "vitest";
import { imageSources, normalizeImageOrigin } from "./image-origins";

describe("image origins: public https origins only (issue 41)", () => {
  it.each([
    ["https://Images.Example.com/", "https://images.example.com"],
    ["https://images.example.com:443", "https://images.example.com"],
    ["https://*.cdn.example.net:8443", "https://*.cdn.example.net:8443"],
    ["https://8.8.8.8", "https://8.8.8.8"],
    ["https://[2606:4700::1111]", "https://[2606:4700::1111]"],
  ])("accepts %s as %s", (text, origin) => {
    expect(normalizeImageOrigin(text)).toBe(origin);
  });

  it.each([
    ["http://images.example.com", "not https"],
    ["https://localhost", "localhost"],
    ["https://app.localhost:3000", "a .localhost name"],
    ["https://*.localhost", "every subdomain of localhost"],
    ["https://printer.local", "mDNS"],
    ["https://*.local", "every .local name"],
    ["https://metadata.google.internal", ".internal"],
    ["https://127.0.0.1", "loopback"],
    ["https://0x7f.1", "loopback, spelt in hex"],
    ["https://2130706433", "loopback, spelt as one number"],
    ["https://169.254.169.254", "link-local (cloud metadata)"],
    ["https://10.1.2.3", "private"],
    ["https://192.168.0.1:8443", "private, with a port"],
    ["https://100.64.0.1", "carrier-grade NAT"],
    ["https://[::1]:8443", "IPv6 loopback"],
    ["https://[fe80::1]", "IPv6 link-local"],
    ["https://[fd00::1]", "IPv6 unique-local"],
    ["https://[::ffff:127.0.0.1]", "IPv4-mapped loopback"],
    ["https://0.0.0.0", "unspecified"],
  ])("refuses %s (%s)", (text) => {
    expect(normalizeImageOrigin(text)).toBeNull();
  });

  it("leaves a stored origin that is no longer allowed out of the CSP", () => {
    expect(imageSources(["https://images.example.com", "http://intranet.example", "https://127.0.0.1"])).toBe("'self' data: blob: https://images.example.com");
  });
});
