import { describe, expect, it } from "vitest";
import { POST as seed } from "@/app/api/v1/custom-dashboards/%5Fseed/route";
import { POST as publish } from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import { POST as trigger } from "@/app/api/v1/notifications/admin/custom-rules/[id]/trigger/route";
import { POST as requeue } from "@/app/api/v1/notifications/admin/dead-letters/[id]/requeue/route";
import { POST as indexDocument } from "@/app/api/v1/documents/[id]/index/route";
import { POST as upload } from "@/app/api/v1/documents/[id]/upload/route";
import { GET as listDashboards } from "@/app/api/v1/custom-dashboards/route";
import { POST as nextAuthPost } from "@/app/api/auth/[...nextauth]/route";
import { call, sessionCookieFor, tokenFor } from "@/test/helpers";

// The bodiless POSTs of issue 13 §7: a cross-site form or fetch with text/plain sends the cookie along.
const CASES: { name: string; handler: Parameters<typeof call>[0]; url: string; params: Record<string, string> }[] = [
  { name: "_seed", handler: seed, url: "/api/v1/custom-dashboards/_seed", params: {} },
  { name: "publish", handler: publish, url: "/api/v1/custom-dashboards/sales-overview/publish", params: { id: "sales-overview" } },
  { name: "trigger", handler: trigger, url: "/api/v1/notifications/admin/custom-rules/rul_missing/trigger", params: { id: "rul_missing" } },
  { name: "requeue", handler: requeue, url: "/api/v1/notifications/admin/dead-letters/dl_missing/requeue", params: { id: "dl_missing" } },
  { name: "index", handler: indexDocument, url: "/api/v1/documents/doc_missing/index", params: { id: "doc_missing" } },
  { name: "upload", handler: upload, url: "/api/v1/documents/doc_missing/upload?filename=a.txt", params: { id: "doc_missing" } },
];

const textPlain = { "content-type": "text/plain" };

describe("Origin check on cookie-authenticated writes (CSRF)", () => {
  it.each(CASES)("$name: a foreign Origin with the session cookie is refused with 403", async ({ handler, url, params }) => {
    const cookie = await sessionCookieFor("acme", "admin");
    const res = await call(handler, "POST", url, { params, rawBody: "x", headers: { ...textPlain, cookie, origin: "https://evil.example" } });
    expect(res.status).toBe(403);
    expect(res.json.detail).toMatch(/Cross-site request refused/);
  });

  it.each(CASES)("$name: no Origin and a foreign Referer is refused; neither header is refused", async ({ handler, url, params }) => {
    const cookie = await sessionCookieFor("acme", "admin");
    const viaReferer = await call(handler, "POST", url, { params, headers: { cookie, referer: "https://evil.example/page" } });
    expect(viaReferer.status).toBe(403);
    const bare = await call(handler, "POST", url, { params, headers: { cookie } });
    expect(bare.status).toBe(403);
    const opaque = await call(handler, "POST", url, { params, headers: { cookie, origin: "null" } });
    expect(opaque.status).toBe(403);
  });

  it.each(CASES)("$name: this site's Origin passes the check", async ({ handler, url, params }) => {
    const cookie = await sessionCookieFor("acme", "admin");
    const res = await call(handler, "POST", url, { params, headers: { cookie, origin: "http://localhost:3000" } });
    expect(res.status).not.toBe(403);
    expect(res.text).not.toMatch(/Cross-site/);
  });

  it.each(CASES)("$name: a bearer call is not checked, whatever its Origin", async ({ handler, url, params }) => {
    const res = await call(handler, "POST", url, { params, token: await tokenFor("acme", "admin"), headers: { origin: "https://evil.example" } });
    expect(res.status).not.toBe(403);
    expect(res.text).not.toMatch(/Cross-site/);
  });

  it("the writes really happen with the right Origin: _seed then publish answer 2xx", async () => {
    const cookie = await sessionCookieFor("acme", "admin");
    const headers = { cookie, origin: "http://localhost:3000" };
    expect((await call(seed, "POST", "/api/v1/custom-dashboards/_seed", { headers })).status).toBeLessThan(300);
    const list = await call(listDashboards, "GET", "/api/v1/custom-dashboards", { headers: { cookie } });
    const id = list.json.items?.[0]?.id ?? list.json[0]?.id;
    expect(id).toBeTruthy();
    const res = await call(publish, "POST", `/api/v1/custom-dashboards/${id}/publish`, { params: { id }, headers });
    expect(res.status).toBeLessThan(300);
  });

  it("a Referer of this site stands in for a missing Origin", async () => {
    const cookie = await sessionCookieFor("acme", "admin");
    const res = await call(seed, "POST", "/api/v1/custom-dashboards/_seed", { headers: { cookie, referer: "http://localhost:3000/dashboards" } });
    expect(res.status).toBeLessThan(300);
  });

  it("GET with a foreign Origin is not a write and is not refused", async () => {
    const cookie = await sessionCookieFor("acme", "admin");
    const res = await call(listDashboards, "GET", "/api/v1/custom-dashboards", { headers: { cookie, origin: "https://evil.example" } });
    expect(res.status).toBe(200);
  });

  it("next-auth's own POSTs are refused from a foreign Origin", async () => {
    const res = await call(nextAuthPost as never, "POST", "/api/auth/signout", {
      params: { nextauth: ["signout"] },
      rawBody: "csrfToken=x",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example" },
    });
    expect(res.status).toBe(403);
  });
});
