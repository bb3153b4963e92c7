import dnsCallbacks from "node:dns";
import dns from "node:dns/promises";
import https from "node:https";
import net from "node:net";
import { afterAll, describe, expect, it, vi } from "vitest";
import * as channelConfig from "@/app/api/v1/notifications/admin/channel-configs/[kind]/route";
import { sendExternal } from "@/lib/notifications/transports/send";
import { embeddedIPv4, isBlockedAddress } from "@/lib/security/internal-address";
import { call, tokenForMember } from "@/test/helpers";

// The loopback server a rebound name would lead to; every connection to it is counted.
let connections = 0;
const loopback = net.createServer((socket) => {
  connections += 1;
  socket.destroy();
});
await new Promise<void>((resolve) => loopback.listen(0, "127.0.0.1", resolve));
const port = (loopback.address() as net.AddressInfo).port;
afterAll(() => new Promise<void>((resolve) => loopback.close(() => resolve())));

process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ in_process_worker: false, send_timeout_ms: 1500, slack_api_url: `https://rebind.example:${port}/api/` });

// Internal addresses spelled as IPv6 forms that carry an IPv4 address.
const SPELLINGS = [
  "[::7f00:1]", // IPv4-compatible 127.0.0.1
  "[::127.0.0.1]",
  "[::a9fe:a9fe]", // IPv4-compatible 169.254.169.254 (cloud metadata)
  "[::ffff:7f00:1]", // IPv4-mapped, hex
  "[0:0:0:0:0:ffff:a00:1]", // IPv4-mapped 10.0.0.1, long form
  "[64:ff9b::7f00:1]", // NAT64 127.0.0.1
  "[64:ff9b::a9fe:a9fe]", // NAT64 169.254.169.254
  "[64:ff9b::192.168.0.1]", // NAT64, dotted
  "[64:ff9b:1::a00:1]", // local-use NAT64
  "[2002:7f00:1::]", // 6to4 127.0.0.1
  "[2002:a9fe:a9fe::1]", // 6to4 169.254.169.254
  "[2001:0:a00:1::1]", // Teredo with a private server address
  "[2001:0:4136:e378:8000:63bf:80ff:fffe]", // Teredo whose (inverted) client address is 127.0.0.1
];

describe("SSRF: IPv4 embedded in IPv6", () => {
  it("decodes the embedded IPv4 of each form", () => {
    expect(embeddedIPv4("::7f00:1")).toEqual(["127.0.0.1"]);
    expect(embeddedIPv4("64:ff9b::a9fe:a9fe")).toEqual(["169.254.169.254"]);
    expect(embeddedIPv4("2002:a9fe:a9fe::1")).toEqual(["169.254.169.254"]);
    expect(embeddedIPv4("2001:0:4136:e378:8000:63bf:80ff:fffe")).toEqual(["65.54.227.120", "127.0.0.1"]);
    expect(embeddedIPv4("2606:4700::1111")).toEqual([]);
  });

  it("still allows public addresses in the same forms", () => {
    for (const address of ["64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8", "2606:4700::1111", "8.8.8.8"]) {
      expect(isBlockedAddress(address), address).toBe(false);
    }
  });

  it.each(SPELLINGS)("refuses a webhook at https://%s with 422", async (host) => {
    // A separate caller per case: the channel-config endpoint is rate limited per user.
    const token = await tokenForMember("acme", "admin", `usr_acme_admin_${SPELLINGS.indexOf(host)}`);
    const res = await call(channelConfig.PUT, "PUT", "/api/v1/notifications/admin/channel-configs/webhook", {
      token,
      params: { kind: "webhook" },
      body: { config: { url: `https://${host}/hook`, signing_secret: "0123456789abcdef" } },
    });
    expect(res.status).toBe(422);
    expect(res.json.detail[0]).toMatchObject({ loc: ["body", "config", "url"], type: "unsafe_target", msg: expect.stringMatching(/private or reserved/) });
  });

  it("refuses an SMTP host spelled the same way", async () => {
    const token = await tokenForMember("acme", "admin", "usr_acme_admin_smtp");
    const res = await call(channelConfig.PUT, "PUT", "/api/v1/notifications/admin/channel-configs/email", {
      token,
      params: { kind: "email" },
      body: { config: { host: "64:ff9b::a00:5", port: 25, from: "a@acme.test" } },
    });
    expect(res.status).toBe(422);
  });
});

describe("SSRF: DNS rebinding", () => {
  const PUBLIC = "93.184.215.14";

  /** A resolver that answers a public address the first time and loopback from then on, for both DNS APIs. */
  function rebindingDns() {
    let calls = 0;
    const next = () => (calls++ === 0 ? PUBLIC : "127.0.0.1");
    const promises = vi.spyOn(dns, "lookup").mockImplementation((async () => [{ address: next(), family: 4 }]) as never);
    const callbacks = vi.spyOn(dnsCallbacks, "lookup").mockImplementation(((_host: string, options: unknown, callback?: (...args: unknown[]) => void) => {
      const cb = (typeof options === "function" ? options : callback) as (...args: unknown[]) => void;
      const all = typeof options === "object" && options !== null && (options as { all?: boolean }).all;
      const address = next();
      if (all) cb(null, [{ address, family: 4 }]);
      else cb(null, address, 4);
    }) as never);
    return () => {
      promises.mockRestore();
      callbacks.mockRestore();
    };
  }

  /**
   * Where pinned connections go, without any packet leaving this machine: a socket connecting
   * through a `lookup` (the guard's pinned one) records the address it resolves to and, for the
   * public address, fails at once as an unreachable network would, instead of connecting.
   */
  function interceptPublicConnects(): { attempted: string[]; restore: () => void } {
    const attempted: string[] = [];
    const connect = net.Socket.prototype.connect;
    const spy = vi.spyOn(net.Socket.prototype, "connect").mockImplementation(function (this: net.Socket, ...args: unknown[]) {
      const options = args[0] as { host?: string; lookup?: net.LookupFunction } | undefined;
      if (typeof options !== "object" || !options?.lookup || !options.host || net.isIP(options.host)) return connect.apply(this, args as never);
      options.lookup(options.host, { family: 0 }, (_error, address) => {
        attempted.push(String(address));
        if (address !== PUBLIC) return void connect.apply(this, args as never);
        process.nextTick(() => this.destroy(Object.assign(new Error(`connect ENETUNREACH ${PUBLIC}`), { code: "ENETUNREACH" })));
      });
      return this;
    } as never);
    return { attempted, restore: () => spy.mockRestore() };
  }

  it("the simulation is real: a check-then-connect with a second lookup reaches the loopback server", async () => {
    const restore = rebindingDns();
    try {
      const checked = (await dns.lookup("rebind.example", { all: true }))[0].address;
      expect(checked).toBe(PUBLIC);
      await new Promise<void>((resolve) => {
        const req = https.request(`https://rebind.example:${port}/hook`, { method: "POST", agent: false }, () => resolve());
        req.on("error", () => resolve());
        req.end("{}");
      });
      expect(connections).toBe(1);
    } finally {
      restore();
    }
  });

  it("a webhook send connects only to the address that was checked, never to the rebound loopback", async () => {
    connections = 0;
    const restore = rebindingDns();
    const connects = interceptPublicConnects();
    try {
      const channel = { kind: "webhook" as const, enabled: true, settings: { url: `https://rebind.example:${port}/hook` }, secrets: { signing_secret: "0123456789abcdef" } };
      const message = { id: "dlv_1", recipient: "x", subject: "s", body: "b", severity: "info", ruleKey: "r", sentAt: new Date() };
      await expect(sendExternal(channel, message)).rejects.toThrow();
      expect(connections).toBe(0);
      expect(connects.attempted).toEqual([PUBLIC]);
    } finally {
      restore();
      connects.restore();
    }
  });

  it("a Slack bot call is pinned the same way", async () => {
    connections = 0;
    const restore = rebindingDns();
    const connects = interceptPublicConnects();
    try {
      const channel = { kind: "slack" as const, enabled: true, settings: { mode: "bot", channel: "#alerts" }, secrets: { bot_token: "xoxb-test" } };
      const message = { id: "dlv_2", recipient: "x", subject: "s", body: "b", severity: "info", ruleKey: "r", sentAt: new Date() };
      await expect(sendExternal(channel, message)).rejects.toThrow();
      expect(connections).toBe(0);
      expect(connects.attempted).toEqual([PUBLIC]);
    } finally {
      restore();
      connects.restore();
    }
  });
});
