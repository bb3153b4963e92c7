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
    expect(res.headers.get("allow")).toBe("GET");
    expect(await res.json()).toEqual({ detail: "Method DELETE is not allowed on /api/v1/locations; allowed: GET" });

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
    expect(allowedMethods("/api/v1/documents/doc_1/index")).toEqual(["DELETE", "POST"]);
    expect(allowedMethods("/api/v1/documents/doc_1/index/extra")).toBeNull();
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
