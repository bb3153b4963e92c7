import { describe, expect, it } from "vitest";
import { call, tokenFor } from "@/test/helpers";
import { GET } from "./route";

describe("GET /api/v1/locations", () => {
  it("lists the caller's organization's locations", async () => {
    const res = await call(GET, "GET", "/api/v1/locations", { token: await tokenFor("acme", "analyst") });
    expect(res.status).toBe(200);
    expect(res.json.items.map((l: { code: string }) => l.code)).toEqual(["AUS", "BOS", "CHI", "NYC", "SFO"]);
    expect(res.json.items[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  });

  it("shows globex none of acme's locations", async () => {
    const res = await call(GET, "GET", "/api/v1/locations", { token: await tokenFor("globex", "admin") });
    expect(res.status).toBe(200);
    expect(res.json.total).toBe(4);
    expect(res.json.items.every((l: { id: string }) => l.id.startsWith("loc_globex_"))).toBe(true);
  });

  it("narrows to the token's location scope", async () => {
    const token = await tokenFor("acme", "general_manager", { locationIds: ["loc_acme_nyc", "loc_acme_bos", "loc_globex_ber"] });
    const res = await call(GET, "GET", "/api/v1/locations", { token });
    expect(res.json.items.map((l: { id: string }) => l.id).sort()).toEqual(["loc_acme_bos", "loc_acme_nyc"]);
  });

  it("requires authentication", async () => {
    const res = await call(GET, "GET", "/api/v1/locations");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
  });
});
