import { describe, expect, it } from "vitest";
import { parseTrustedProxies } from "@/lib/config/trusted-proxies";
import { PEER_HEADER, PEER_KEY_HEADER, clientAddress, pickClientAddress } from "./client-address";

const none = parseTrustedProxies(undefined);

describe("caller address", () => {
  it("is the socket peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(pickClientAddress("203.0.113.9", "1.2.3.4, 5.6.7.8", none)).toBe("203.0.113.9");
    expect(pickClientAddress("::ffff:203.0.113.9", null, parseTrustedProxies("0"))).toBe("203.0.113.9");
  });

  it("with a hop count, takes the entry that many steps left of the peer", () => {
    const one = parseTrustedProxies("1");
    // client-written junk, then what our load balancer appended (the real caller), then the balancer itself as peer.
    expect(pickClientAddress("10.0.0.2", "6.6.6.6, 198.51.100.7", one)).toBe("198.51.100.7");
    expect(pickClientAddress("10.0.0.2", "198.51.100.7", one)).toBe("198.51.100.7");
    expect(pickClientAddress("10.0.0.3", "9.9.9.9, 198.51.100.7, 10.0.0.2", parseTrustedProxies("2"))).toBe("198.51.100.7");
    // Fewer entries than hops: the leftmost (there is nothing further to trust).
    expect(pickClientAddress("10.0.0.2", null, parseTrustedProxies("3"))).toBe("10.0.0.2");
  });

  it("with a CIDR list, takes the rightmost address that is not a trusted proxy", () => {
    const cidrs = parseTrustedProxies("10.0.0.0/8, fd00::/8");
    expect(pickClientAddress("10.1.2.3", "6.6.6.6, 198.51.100.7, 10.9.9.9", cidrs)).toBe("198.51.100.7");
    expect(pickClientAddress("fd00::1", "[2001:db8::5]:443", cidrs)).toBe("2001:db8::5");
    // A peer outside the list is the caller even if it sends a header.
    expect(pickClientAddress("198.51.100.7", "10.0.0.1", cidrs)).toBe("198.51.100.7");
    expect(pickClientAddress("10.1.2.3", "not-an-ip, 10.0.0.9", cidrs)).toBe("not-an-ip");
  });

  it("refuses malformed QUARRY_TRUSTED_PROXIES values", () => {
    expect(() => parseTrustedProxies("10.0.0.0/33")).toThrow(/prefix length/);
    expect(() => parseTrustedProxies("proxy.internal")).toThrow(/neither a hop count/);
  });

  it("believes the peer header only with this process's key; a client-sent copy is ignored", () => {
    const slot = Symbol.for("quarry.peerKey");
    const g = globalThis as Record<symbol, unknown>;
    const before = g[slot];
    g[slot] = "k".repeat(32);
    try {
      const forged = new Headers({ [PEER_HEADER]: "1.2.3.4", [PEER_KEY_HEADER]: "guess-guess-guess-guess" });
      expect(clientAddress(forged, none)).toBeNull();
      const stamped = new Headers({ [PEER_HEADER]: "198.51.100.7", [PEER_KEY_HEADER]: "k".repeat(32), "x-forwarded-for": "1.2.3.4" });
      expect(clientAddress(stamped, none)).toBe("198.51.100.7");
    } finally {
      g[slot] = before;
    }
  });
});
