import crypto from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { POST as nextAuthPost } from "@/app/api/auth/[...nextauth]/route";
import { PEER_HEADER, PEER_KEY_HEADER } from "@/lib/security/client-address";
import { authOptions } from "@/lib/auth/session";
import { SIGN_IN_LIMITS, signInRetryAfter } from "@/lib/auth/throttle";
import { DEMO_PASSWORD } from "@/lib/demo/seed";
import { call } from "@/test/helpers";

const KEY = "test-peer-key-0123456789abcdef";
(globalThis as Record<symbol, unknown>)[Symbol.for("quarry.peerKey")] = KEY;

type Authorize = (credentials: Record<string, string>, req: { headers: Record<string, string> }) => Promise<unknown>;
const authorize = (authOptions().providers[0] as unknown as { options: { authorize: Authorize } }).options.authorize;
const fromAddress = (address: string) => ({ headers: { [PEER_HEADER]: address, [PEER_KEY_HEADER]: KEY } });

function postCredentials(email: string, address: string) {
  return call(nextAuthPost as never, "POST", "/api/auth/callback/credentials", {
    params: { nextauth: ["callback", "credentials"] },
    rawBody: new URLSearchParams({ email, password: "wrong", csrfToken: "x", json: "true" }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://localhost:3000", [PEER_HEADER]: address, [PEER_KEY_HEADER]: KEY },
  });
}

describe("sign-in hardening", () => {
  it("does exactly one scrypt for an unknown email, as for a known one", async () => {
    const spy = vi.spyOn(crypto, "scrypt");
    try {
      await authorize({ email: "nobody@acme.test", password: "x" }, fromAddress("198.51.100.1"));
      const unknown = spy.mock.calls.length;
      spy.mockClear();
      await authorize({ email: "analyst@acme.test", password: "x" }, fromAddress("198.51.100.1"));
      expect(unknown).toBe(1);
      expect(spy.mock.calls.length).toBe(1);
    } finally {
      spy.mockRestore();
    }
  });

  it("answers unknown and known emails in comparable time (median of 5, loose bound)", async () => {
    // Known and unknown attempts alternate, so a load that comes and goes (a shared 2-core runner) slows both alike.
    const times = { known: [] as number[], unknown: [] as number[] };
    for (let i = 0; i < SIGN_IN_LIMITS.account.failures; i++) {
      for (const [kind, email] of [["known", "gm@globex.test"], ["unknown", "ghost@globex.test"]] as const) {
        const started = performance.now();
        await authorize({ email, password: "not-it" }, fromAddress(`198.51.100.${50 + i}`));
        times[kind].push(performance.now() - started);
      }
    }
    const median = (list: number[]) => list.sort((a, b) => a - b)[Math.floor(list.length / 2)];
    const ratio = median(times.unknown) / median(times.known);
    // Before the dummy hash: 11 ms vs 80 ms (0.14). Now both hash once; 0.36 was seen at load 9 when the two
    // were measured one after the other, so the bounds stay loose and still catch a missing hash.
    expect(ratio).toBeGreaterThan(0.25);
    expect(ratio).toBeLessThan(4);
  });

  it("signs in with the right password and refuses a wrong one", async () => {
    expect(await authorize({ email: "admin@globex.test", password: DEMO_PASSWORD }, fromAddress("198.51.100.2"))).toMatchObject({ uid: "usr_globex_admin" });
    expect(await authorize({ email: "admin@globex.test", password: "nope" }, fromAddress("198.51.100.2"))).toBeNull();
  });

  it("throttles an account after repeated failures with 429 and Retry-After, from any address", async () => {
    const email = "analyst@globex.test";
    for (let i = 0; i < SIGN_IN_LIMITS.account.failures; i++) {
      expect(await authorize({ email, password: "guess" }, fromAddress(`203.0.113.${i + 1}`))).toBeNull();
    }
    const res = await postCredentials(email, "203.0.113.200");
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(res.json).toMatchObject({ error: "TooManyAttempts", detail: expect.stringMatching(/Too many failed sign-ins/) });
    // Even the right password is refused while throttled.
    await expect(authorize({ email, password: DEMO_PASSWORD }, fromAddress("203.0.113.201"))).rejects.toThrow("TooManyAttempts");
  });

  it("throttles an address that guesses across many accounts", async () => {
    const address = "192.0.2.77";
    for (let i = 0; i < SIGN_IN_LIMITS.address.failures; i++) {
      await authorize({ email: `user${i}@nowhere.test`, password: "guess" }, fromAddress(address));
    }
    expect((await postCredentials("admin@acme.test", address)).status).toBe(429);
    // Another address is unaffected.
    expect(await signInRetryAfter({ email: "admin@acme.test", address: "192.0.2.78" })).toBe(0);
  });

  // Last: it throttles admin@acme.test, which the test above needs unthrottled.
  it("every spelling of one account finds the same user and counts in one throttle bucket (admİn@acme.test, issue 26)", async () => {
    const spellings = ["admİn@acme.test", "ADMIN@acme.test", "ａｄｍｉｎ@acme.test", "Admin@ACME.test", "admın@acme.test", " admin@acme.test"];
    // With the right password each spelling signs in as acme's admin (and clears the account's failures).
    for (const [i, email] of spellings.entries()) {
      expect(await authorize({ email, password: DEMO_PASSWORD }, fromAddress(`198.51.100.${120 + i}`)), email).toMatchObject({ uid: "usr_acme_admin" });
    }
    // Failures under different spellings, each from its own address, add up to the one account's limit.
    for (let i = 0; i < SIGN_IN_LIMITS.account.failures; i++) {
      expect(await authorize({ email: spellings[i % spellings.length], password: "guess" }, fromAddress(`198.51.100.${140 + i}`))).toBeNull();
    }
    for (const email of [...spellings, "admin@acme.test"]) {
      expect(await signInRetryAfter({ email, address: "198.51.100.250" }), email).toBeGreaterThan(0);
      expect((await postCredentials(email, "198.51.100.251")).status, email).toBe(429);
      await expect(authorize({ email, password: DEMO_PASSWORD }, fromAddress("198.51.100.252"))).rejects.toThrow("TooManyAttempts");
    }
    // Another account of the organization is not throttled.
    expect(await signInRetryAfter({ email: "analyst@acme.test", address: "198.51.100.250" })).toBe(0);
  });
});
