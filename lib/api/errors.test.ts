import { describe, expect, it } from "vitest";
import { Conflict, Forbidden, NotFound, TimedOut } from "@/lib/errors";
import { asDomainError, domainErrorResponse, noEndpointResponse } from "./errors";

describe("the error table", () => {
  it("maps the database errors that mean something to the caller to the domain errors they are", () => {
    expect(asDomainError({ code: "P2002" })).toBeInstanceOf(Conflict);
    expect(asDomainError({ code: "23505" })).toBeInstanceOf(Conflict);
    expect(asDomainError({ code: "P2025" })).toBeInstanceOf(NotFound);
    expect(asDomainError({ code: "57014" })).toBeInstanceOf(TimedOut);
  });

  it("passes domain errors through and leaves everything else a defect (null: 500)", () => {
    const forbidden = new Forbidden("no");
    expect(asDomainError(forbidden)).toBe(forbidden);
    for (const other of [new Error("boom"), { code: "42P01" }, { code: "toString" }, null, undefined, "text"]) expect(asDomainError(other)).toBeNull();
  });

  it("answers a database conflict as 409 with a detail", async () => {
    const res = domainErrorResponse(asDomainError({ code: "23505" })!);
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ detail: "A record with the same unique value already exists" });
  });

  it("answers an unknown endpoint 404 with a detail and the request id", async () => {
    const res = noEndpointResponse("GET", "/api/v2/locations", "req-1");
    expect(res.status).toBe(404);
    expect(res.headers.get("x-request-id")).toBe("req-1");
    expect(await res.json()).toEqual({ detail: "No endpoint GET /api/v2/locations; see /docs" });
  });
});
