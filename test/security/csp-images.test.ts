import { NextRequest } from "next/server";
import { beforeAll, describe, expect, it } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as embed from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as settings from "@/app/api/v1/organization/settings/route";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { normalizeImageOrigin } from "@/lib/security/image-origins";
import { call, sessionCookieFor, tokenFor } from "@/test/helpers";
import { proxy } from "@/proxy";

// Issue 26 §7: the CSP allowed http:/https: images from anywhere (an image widget's //host/x.png made
// every embed viewer's browser call a third party) and inline styles. Now images load only from this
// origin, data:/blob: URLs and the origins an admin lists for the organization; protocol-relative URLs
// are refused in manifests; <style> elements need the nonce, style attributes stay allowed.

const directive = (csp: string, name: string) => csp.split("; ").find((d) => d.split(" ")[0] === name) ?? "";
const cspOf = async (path: string, headers: Record<string, string> = {}) => {
  const res = await proxy(new NextRequest(new URL(path, "http://localhost:3000"), { headers }));
  return res.headers.get("content-security-policy") ?? "";
};

const manifest = (slug: string, url: string) => `version: "1.0"
kind: dashboard
metadata: { id: ${slug}, name: ${slug} }
platform: { allow_embed: true, public: true }
spec:
  tabs: [{ id: main, name: Main, widgets: [logo] }]
---
version: "1.0"
kind: widget
metadata: { id: logo, name: Logo }
spec:
  component: image
  layout: { x: 0, y: 0, w: 3, h: 2 }
  display:
    image: { url: "${url}", alt: Logo }
`;

let admin: string;
let analyst: string;
let globexAdmin: string;

beforeAll(async () => {
  [admin, analyst, globexAdmin] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")]);
});

describe("image widget URLs in manifests", () => {
  it("refuses protocol-relative and backslash URLs with line and column, accepts http(s) URLs and paths on this site", () => {
    for (const url of ["//tracker.example/x.png", "/\\\\tracker.example/x.png", "https:///x.png", "javascript:alert(1)", "data:image/png;base64,AAAA", "/a b.png"]) {
      const parsed = parseDashboardYaml(manifest("img", url));
      expect(parsed.ok, url).toBe(false);
      if (parsed.ok) continue;
      expect(parsed.errors[0], url).toMatchObject({ path: ["spec", "display", "image", "url"], line: 15, column: 19 });
      expect(parsed.errors[0].message, url).toMatch(/protocol-relative \/\/host URL would load from another site/);
    }
    for (const url of ["https://images.example.com/logo.png", "http://intranet.test/a.png", "/quarry-logo.svg"]) expect(parseDashboardYaml(manifest("img", url)).ok, url).toBe(true);
  });
});

describe("organization image origins (settings API)", () => {
  it("lets an admin read and replace the list, normalized; refuses anything that is not an origin", async () => {
    expect((await call(settings.GET, "GET", { token: admin })).json).toEqual({ image_origins: [], index_on_upload: true, report_allowed_domains: [], updated_at: null });
    const put = await call(settings.PUT, "PUT", { token: admin, body: { image_origins: ["https://Images.Example.com/", "https://*.cdn.example.net", "https://images.example.com:443"] } });
    expect(put.status).toBe(200);
    expect(put.json.image_origins).toEqual(["https://images.example.com", "https://*.cdn.example.net"]);
    expect((await call(settings.GET, "GET", { token: admin })).json.image_origins).toEqual(["https://images.example.com", "https://*.cdn.example.net"]);

    // Issue 41: only public https origins; an internal one would send viewers' browsers into their own network.
    const internal = ["http://images.example.com", "https://localhost:3000", "https://127.0.0.1", "https://169.254.169.254", "https://[fe80::1]", "https://[fd00::1]", "https://*.local"];
    for (const bad of ["//images.example.com", "https://images.example.com/path", "https://x.example; script-src *", "https://u:p@x.example", "*", "https://*", "data:", "'self'", ...internal]) {
      const res = await call(settings.PUT, "PUT", { token: admin, body: { image_origins: [bad] } });
      expect(res.status, bad).toBe(422);
      expect(res.json.detail[0].loc, bad).toEqual(["body", "image_origins", 0]);
    }
    expect((await call(settings.PUT, "PUT", { token: admin, body: { image_origins: Array.from({ length: 21 }, (_, i) => `https://i${i}.example.com`) } })).status).toBe(422);
    expect(normalizeImageOrigin("https://[::1]:8443")).toBeNull();
  });

  it("is for admins of the organization only", async () => {
    expect((await call(settings.GET, "GET", { token: analyst })).status).toBe(403);
    expect((await call(settings.PUT, "PUT", { token: analyst, body: { image_origins: [] } })).status).toBe(403);
    // Another organization's admin sees and changes only their own.
    expect((await call(settings.GET, "GET", { token: globexAdmin })).json.image_origins).toEqual([]);
    expect((await call(settings.PUT, "PUT", { token: globexAdmin, body: { image_origins: ["https://globex.example"] } })).status).toBe(200);
    expect((await call(settings.GET, "GET", { token: admin })).json.image_origins).toEqual(["https://images.example.com", "https://*.cdn.example.net"]);
  });
});

describe("Content-Security-Policy: images and styles", () => {
  let embedToken: string;
  beforeAll(async () => {
    await call(settings.PUT, "PUT", { token: admin, body: { image_origins: ["https://images.example.com"] } });
    await call(settings.PUT, "PUT", { token: globexAdmin, body: { image_origins: ["https://globex.example"] } });
    expect((await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "csp", slug: "csp-images", spec_yaml: manifest("csp", "https://images.example.com/logo.png") } })).status).toBe(201);
    expect((await call(publish.POST, "POST", { token: admin, params: { id: "csp-images" } })).status).toBe(200);
    const made = await call(embed.POST, "POST", { token: admin, params: { id: "csp-images" }, body: {} });
    embedToken = made.json.token;
  });

  it("gives a page without an organization only this origin, data: and blob: for images", async () => {
    for (const path of ["/signin", "/", "/docs", "/embed/not-a-token", "/public/nope/x", "/embed/%E0"]) {
      const csp = await cspOf(path);
      expect(directive(csp, "img-src"), path).toBe("img-src 'self' data: blob:");
      expect(csp, path).not.toMatch(/img-src[^;]*(https:|http:)(;|\s|$)/);
    }
  });

  it("adds the organization's image origins on its embed, public and signed-in pages, and only its own", async () => {
    const acme = "img-src 'self' data: blob: https://images.example.com";
    expect(directive(await cspOf(`/embed/${embedToken}`), "img-src")).toBe(acme);
    expect(directive(await cspOf("/public/acme/csp-images"), "img-src")).toBe(acme);
    expect(directive(await cspOf("/dashboards/custom", { cookie: await sessionCookieFor("acme", "analyst") }), "img-src")).toBe(acme);
    expect(directive(await cspOf("/dashboards/custom", { cookie: await sessionCookieFor("globex", "analyst") }), "img-src")).toBe("img-src 'self' data: blob: https://globex.example");
    // A forged cookie is no organization at all.
    expect(directive(await cspOf("/dashboards/custom", { cookie: "next-auth.session-token=forged" }), "img-src")).toBe("img-src 'self' data: blob:");
  });

  it("admits <style> elements by nonce only and keeps style attributes for the libraries that set them", async () => {
    const csp = await cspOf(`/embed/${embedToken}`);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(directive(csp, "style-src-elem")).toBe(`style-src-elem 'self' 'nonce-${nonce}'`);
    expect(directive(csp, "style-src")).toBe(`style-src 'self' 'nonce-${nonce}'`);
    expect(directive(csp, "style-src-attr")).toBe("style-src-attr 'unsafe-inline'");
    expect(csp).not.toMatch(/style-src(-elem)? [^;]*'unsafe-inline'/);
  });
});
