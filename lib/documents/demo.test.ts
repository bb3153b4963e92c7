import { describe, expect, it } from "vitest";
import { GET as listDocuments } from "@/app/api/v1/documents/route";
import { POST as search } from "@/app/api/v1/documents/search/route";
import { call, tokenFor } from "@/test/helpers";
import { seedDemoDocuments } from "./demo";

describe("demo documents", () => {
  it("uploads and indexes the handbook set for each demo organization once, searchable only inside it", async () => {
    expect(await seedDemoDocuments()).toBe(2);
    expect(await seedDemoDocuments()).toBe(0);

    const acme = await tokenFor("acme", "analyst");
    const list = await call(listDocuments, "GET", "/api/v1/documents", { token: acme });
    expect(list.status).toBe(200);
    expect(list.json.items.map((d: { filename: string }) => d.filename).sort()).toEqual([
      "Loyalty programme terms.txt",
      "Store opening and closing checklist.txt",
      "Supplier delivery schedule.csv",
    ]);
    for (const doc of list.json.items) {
      expect(doc).toMatchObject({ status: "indexed", tags: ["demo"] });
      expect(doc.chunk_count).toBeGreaterThan(0);
    }

    const found = await call(search, "POST", "/api/v1/documents/search", { token: acme, body: { query: "when do loyalty points expire", top_k: 3 } });
    expect(found.status).toBe(200);
    expect(found.json.results[0].document_title).toBe("Loyalty programme terms");
    expect(found.json.results[0].text).toContain("expire 24 months");

    const delivery = await call(search, "POST", "/api/v1/documents/search", { token: acme, body: { query: "Sierra Produce delivery day West", top_k: 1 } });
    expect(delivery.json.results[0]).toMatchObject({ document_title: "Supplier delivery schedule" });
    expect(delivery.json.results[0].row_start).toBeGreaterThan(0);

    // Both organizations hold their own copies; neither search returns the other's chunks.
    const globex = await call(search, "POST", "/api/v1/documents/search", { token: await tokenFor("globex", "admin"), body: { query: "loyalty points expire", top_k: 10 } });
    const acmeIds = new Set(list.json.items.map((d: { id: string }) => d.id));
    expect(globex.json.results.length).toBeGreaterThan(0);
    expect(globex.json.results.filter((r: { document_id: string }) => acmeIds.has(r.document_id))).toEqual([]);
  });
});
