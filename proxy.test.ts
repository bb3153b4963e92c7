import { NextRequest } from "next/server";
import { describe, expect, it } from "vitest";
import { allowedMethods } from "@/lib/api/allowed-methods";
import * as upload from "@/app/api/v1/documents/[id]/upload/route";
import { call } from "@/test/helpers";
import { config as proxyConfig, proxy } from "./proxy";

const request = (method: string, path: string) => new NextRequest(new URL(path, "http://localhost:3000"), { method });

describe("request gate: methods", () => {
  it("answers a method no endpoint serves with 405, Allow and a detail", async () => {
    const res = await proxy(request("DELETE", "/api/v1/locations"));
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, POST");
    expect(await res.json()).toEqual({ detail: "Method DELETE is not allowed on /api/v1/locations; allowed: GET, POST" });

    const seed = await proxy(request("GET", "/api/v1/custom-dashboards/_seed"));
    expect(seed.status).toBe(405);
    expect(seed.headers.get("allow")).toBe("POST");
  });

  it("lets served methods, unknown paths (the catch-all's 404) and pages through", async () => {
    for (const [method, path] of [["GET", "/api/v1/locations"], ["HEAD", "/api/v1/locations"], ["POST", "/api/v1/custom-dashboards/sample-sales/query"], ["GET", "/api/v1/nothing-here"], ["DELETE", "/dashboards/custom"]]) {
      const res = await proxy(request(method, path));
      expect(res.status, `${method} ${path}`).toBe(200);
      expect(res.headers.get("x-middleware-next"), `${method} ${path}`).toBe("1");
    }
  });

  it("knows every registered path, literal segments before placeholders", () => {
    expect(allowedMethods("/api/v1/custom-dashboards/abc")).toEqual(["DELETE", "GET", "PUT"]);
    expect(allowedMethods("/api/v1/custom-dashboards/_seed")).toEqual(["POST"]);
    expect(allowedMethods("/api/v1/documents/doc_1/index")).toEqual(["DELETE", "GET", "POST"]);
    expect(allowedMethods("/api/v1/documents/doc_1/index/extra")).toBeNull();
  });
});

describe("request gate: Content-Security-Policy", () => {
  const scriptSources = (csp: string) => csp.split("; ").find((d) => d.startsWith("script-src"))?.split(" ").slice(1) ?? [];

  it("gives every page a strict script policy with a fresh nonce, also on the request Next.js renders from", async () => {
    const seen = new Set<string>();
    for (const path of ["/", "/dashboards/custom", "/documents", "/chat", "/admin/notifications", "/docs", "/signin", "/public/acme/sample-sales"]) {
      const res = await proxy(request("GET", path));
      const csp = res.headers.get("content-security-policy") ?? "";
      const sources = scriptSources(csp);
      expect(sources, path).toEqual([expect.stringMatching(/^'nonce-[A-Za-z0-9+/]{22}==?'$/), "'strict-dynamic'"]);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("object-src 'none'");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      // Next.js reads the nonce from the forwarded request headers.
      expect(res.headers.get("x-middleware-request-content-security-policy")).toBe(csp);
      seen.add(sources[0]);
    }
    expect(seen.size).toBe(8);
  });

  it("lets an embed page be framed, still with a nonce and only its own origin to talk to", async () => {
    const res = await proxy(request("GET", "/embed/not-a-valid-token"));
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(scriptSources(csp)[1]).toBe("'strict-dynamic'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors *");
    expect(res.headers.get("x-frame-options")).toBeNull();
  });
});

describe("request gate: one preview", () => {
  it("answers the older ?preview=1 with a 308 to /preview, keeping the other parameters", async () => {
    const res = await proxy(request("GET", "/dashboards/custom/sample-sales?preview=1&f.channel=web&version=draft"));
    expect(res.status).toBe(308);
    expect(res.headers.get("location")).toBe("http://localhost:3000/dashboards/custom/sample-sales/preview?f.channel=web&version=draft");
  });

  it("renders /preview without app chrome and the dashboard page with it", async () => {
    const chrome = async (path: string) => (await proxy(request("GET", path))).headers.get("x-middleware-request-x-quarry-chrome");
    expect(await chrome("/dashboards/custom/sample-sales/preview")).toBe("bare");
    expect(await chrome("/dashboards/custom/sample-sales")).toBeNull();
    expect(await chrome("/dashboards/custom/sample-sales?preview=0")).toBeNull();
  });
});

describe("upload path (outside the request gate)", () => {
  it("is left out of the proxy's matcher, so large bodies stream", () => {
    const matcher = new RegExp(`^${proxyConfig.matcher[0]}$`);
    expect(matcher.test("/api/v1/documents/doc_1/upload")).toBe(false);
    expect(matcher.test("/api/v1/documents/doc_1/index")).toBe(true);
  });

  it.each(["GET", "PUT", "PATCH", "DELETE"])("answers %s with 405, Allow and a detail", async (method) => {
    const res = await call(upload[method as "GET"], method, "/api/v1/documents/doc_1/upload", { params: { id: "doc_1" } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(res.json).toEqual({ detail: `Method ${method} is not allowed on /api/v1/documents/doc_1/upload; allowed: POST` });
  });
});
