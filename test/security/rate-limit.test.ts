import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { PEER_HEADER, PEER_KEY_HEADER } from "@/lib/security/client-address";
import { defineOperation } from "@/lib/operation";
import { route } from "@/lib/api/route";
import { call } from "@/test/helpers";

const KEY = "test-peer-key-0123456789abcdef";
(globalThis as Record<symbol, unknown>)[Symbol.for("quarry.peerKey")] = KEY;

const publicLimited = route(
  defineOperation(
    defineEndpoint({ method: "get", path: "/api/v1/_limited", summary: "test", tags: [], access: "public", rateLimit: { limit: 2, windowSeconds: 60 }, response: z.object({ ok: z.boolean() }) }),
    async () => ({ ok: true }),
  ),
);

const from = (peer: string, forwardedFor: string) => ({ headers: { [PEER_HEADER]: peer, [PEER_KEY_HEADER]: KEY, "x-forwarded-for": forwardedFor } });

describe("anonymous rate limits key on the socket address", () => {
  it("a new X-Forwarded-For on every request does not escape the limit", async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(publicLimited, "GET", "/api/v1/_limited", from("198.51.100.20", `10.0.0.${i}`))).status);
    expect(statuses).toEqual([200, 200, 429, 429]);
  });

  it("another address has its own budget", async () => {
    expect((await call(publicLimited, "GET", "/api/v1/_limited", from("198.51.100.21", "1.1.1.1"))).status).toBe(200);
  });

  it("a forged peer header (without the server's key) is not believed", async () => {
    const forged = { headers: { [PEER_HEADER]: "198.51.100.99", [PEER_KEY_HEADER]: "wrong" } };
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(publicLimited, "GET", "/api/v1/_limited", forged)).status);
    // All unknown callers share one bucket: forging buys nothing.
    expect(statuses).toEqual([200, 200, 429]);
  });
});
