import { describe, expect, it } from "vitest";
import { fillPath, literalSegments, pathPattern } from "./path-template";

describe("path templates", () => {
  it("matches one non-empty segment per placeholder, a trailing slash allowed, nothing more", () => {
    const pattern = pathPattern("/api/v1/custom-dashboards/{id}/embeds/{embed_id}");
    expect(pattern.test("/api/v1/custom-dashboards/dsh_1/embeds/emb_2")).toBe(true);
    expect(pattern.test("/api/v1/custom-dashboards/dsh_1/embeds/emb_2/")).toBe(true);
    expect(pattern.test("/api/v1/custom-dashboards//embeds/emb_2")).toBe(false);
    expect(pattern.test("/api/v1/custom-dashboards/a/b/embeds/emb_2")).toBe(false);
    expect(pattern.test("/api/v1/custom-dashboards/dsh_1/embeds/emb_2/x")).toBe(false);
  });

  it("reads the template's other characters literally", () => {
    expect(pathPattern("/openapi.json").test("/openapiXjson")).toBe(false);
    expect(pathPattern("/api/v1/custom-dashboards/_seed").test("/api/v1/custom-dashboards/_seed")).toBe(true);
  });

  it("fills placeholders URL-encoded, by name", () => {
    expect(fillPath("/api/v1/custom-dashboards/{id}/versions/{version}", (name) => ({ id: "a b/c", version: "2" })[name] ?? "")).toBe("/api/v1/custom-dashboards/a%20b%2Fc/versions/2");
  });

  it("counts literal segments (a router prefers _seed to {id})", () => {
    expect(literalSegments("/api/v1/custom-dashboards/_seed")).toBe(4);
    expect(literalSegments("/api/v1/custom-dashboards/{id}")).toBe(3);
  });
});
