import { describe, expect, it } from "vitest";
import { GET as listDocumentsRoute } from "@/app/api/v1/documents/route";
import { principalFromBearer } from "@/lib/auth/bearer";
import { createDocument, listDocuments } from "@/lib/documents/operations";
import { Forbidden, Invalid, Unauthenticated } from "@/lib/errors";
import { call, tokenFor } from "@/test/helpers";
import { invoke } from "./operation";

const principal = async (role: "admin" | "analyst") => principalFromBearer(await tokenFor("acme", role));

describe("invoke(operation, principal, input)", () => {
  it("answers what the route sends for the same request", async () => {
    const admin = await principal("admin");
    await invoke(createDocument, admin, { body: { filename: "invoke.txt", description: "", tags: ["invoke"] } });
    const answer = await invoke(listDocuments, admin, { query: { limit: 5, offset: 0 } });
    const res = await call(listDocumentsRoute, "GET", "/api/v1/documents?limit=5&offset=0", { token: await tokenFor("acme", "admin") });
    expect(res.status).toBe(200);
    expect(answer).toEqual(res.json);
    expect(JSON.stringify(answer)).toContain("invoke.txt");
  });

  it("applies the endpoint's access policy, as route() does", async () => {
    await expect(invoke(createDocument, await principal("analyst"), { body: { filename: "x.txt", description: "", tags: [] } })).rejects.toBeInstanceOf(Forbidden);
    await expect(invoke(listDocuments, null)).rejects.toBeInstanceOf(Unauthenticated);
  });

  it("parses the input with the endpoint's schemas and lists every problem", async () => {
    const error = await invoke(createDocument, await principal("admin"), { body: { filename: "", description: "", tags: [] } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Invalid);
    expect((error as Invalid).detail).toEqual([expect.objectContaining({ loc: ["body", "filename"] })]);
  });
});
