// Honest relevance (issue 28 §3, first part): search never presents a passage whose embedding points away
// from the query (cosine similarity 0 or less) unless the full-text search matched it, and chat says
// plainly that nothing relevant was found instead of citing an unrelated passage; citations come best first.
import { beforeAll, describe, expect, it } from "vitest";
import { seedDemoDocuments } from "@/lib/documents/demo";
import { call, tokenFor } from "@/test/helpers";
import * as search from "../documents/search/route";
import * as chat from "./route";

process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ in_process_worker: false });

let acme: string;
beforeAll(async () => {
  await seedDemoDocuments();
  acme = await tokenFor("acme", "analyst");
}, 120_000);

interface Hit { similarity: number; keyword_match: boolean; term_coverage: number; terms_matched: number; document_title: string }
const find = async (query: string, mode: "vector" | "hybrid") =>
  (await call(search.POST, "POST", "/api/v1/documents/search", { token: acme, body: { query, mode, top_k: 20 } })).json.results as Hit[];
const ask = async (question: string) => {
  const res = await call(chat.POST, "POST", "/api/v1/chat", { token: acme, body: { messages: [{ role: "user", content: question }] } });
  expect(res.status, res.text).toBe(200);
  const events = res.text.trim().split("\n").map((line) => JSON.parse(line) as { type: string; sources?: { score: number; document_title: string }[]; notice?: string; text?: string });
  return { head: events[0], text: events.filter((e) => e.type === "delta").map((e) => e.text).join("") };
};

describe("honest relevance", () => {
  it("search never presents a passage pointing away from the query as a match", async () => {
    for (const query of ["penguin migration patterns", "zebra xylophone quantum", "when do loyalty points expire"]) {
      for (const mode of ["vector", "hybrid"] as const) {
        for (const hit of await find(query, mode)) expect(hit.keyword_match || hit.similarity > 0, `${mode} ${query}: ${JSON.stringify(hit)}`).toBe(true);
      }
    }
    const [best] = await find("when do loyalty points expire", "hybrid");
    expect(best).toMatchObject({ document_title: "Loyalty programme terms", keyword_match: true, term_coverage: 1, terms_matched: 3 });
  });

  it("chat says nothing relevant was found for a question the documents do not answer", async () => {
    for (const question of ["What is the capital of France?", "Describe penguin migration patterns", "What was the quarterly revenue of the Berlin office?"]) {
      const { head, text } = await ask(question);
      expect(head).toMatchObject({ type: "sources", sources: [], notice: "Nothing relevant was found." });
      expect(text).toMatch(/^Nothing relevant was found/);
    }
  });

  it("chat cites the passages that answer, best first", async () => {
    for (const [question, title] of [
      ["When do loyalty points expire?", "Loyalty programme terms"],
      ["How much is the birthday voucher for gold members?", "Loyalty programme terms"],
      ["Who delivers produce on Monday?", "Supplier delivery schedule"],
      ["What temperature should the fridges be?", "Store opening and closing checklist"],
    ]) {
      const { head } = await ask(question);
      expect(head.sources!.length, question).toBeGreaterThan(0);
      expect(head.sources![0].document_title, question).toBe(title);
      const scores = head.sources!.map((s) => s.score);
      expect(scores, question).toEqual([...scores].sort((a, b) => b - a));
    }
  });
});
