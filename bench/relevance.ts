// npm run bench -- relevance: how well search finds the passage that answers a question (issue 28 §3).
// A labelled set, kept here: questions over the demo documents (docs/demo-documents) and over a 12-page
// PDF made below (one fact per page, pages of about 150 words, so a 500-word chunk spans several pages),
// each with the document and, for the PDF, the page that answers it; plus questions no document answers.
// For each search mode it prints recall@5 (the right document, and page where one is labelled, among
// the first five hits), MRR (1 / rank of the first right hit), the relevance shown for the right hits, and
// how many unanswerable questions still got a hit above the relevance floor. It runs twice: with the
// configured embedding provider (EMBEDDING_PROVIDER_CONFIG; unset: the offline word-matching embedder),
// then with the OpenAI provider against a loopback fake of its API (no network here).
import http from "node:http";
import type { AddressInfo } from "node:net";
import PDFDocument from "pdfkit";
import type { Principal } from "@/lib/access/roles";
import { seedDemoDocuments } from "@/lib/documents/demo";
import { createDocument } from "@/lib/documents/operations";
import { indexDocument } from "@/lib/documents/indexing/index-document";
import { searchDocuments } from "@/lib/documents/search/search";
import { uploadDocumentFile } from "@/lib/documents/files/upload";
import { LOCAL_EMBEDDING_SETTINGS } from "@/lib/config/embeddings";
import { EmbeddingProviders, embeddingProvidersSingleton, embeddingStatus } from "@/lib/embeddings";
import { invoke } from "@/lib/operation";
import { withSeededDb } from "./lib/seeded-db";

const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme Retail", role: "admin", locationIds: null, via: "bearer" };

/** The PDF's pages: one fact each, padded with neutral prose. */
const PDF_FACTS = [
  "Welcome to the Acme warehouse handbook. It explains how the depot in Rotterdam works day to day.",
  "Shift patterns: the early shift starts at 06:00 and the late shift ends at 22:30; swaps are agreed with the shift lead.",
  "Forklift drivers must hold a valid licence and inspect the brakes, horn and mast chains before every shift.",
  "Hazardous goods are stored in cage 14, away from the loading doors, and logged in the dangerous goods register.",
  "Returned goods are inspected within 48 hours; damaged items are photographed and sent to the claims team.",
  "The penguin-shaped mascot costume is kept in locker 3 and is only worn at the annual family open day.",
  "Pallets heavier than 900 kilograms are never stacked; the racking label shows each level's safe working load.",
  "Fire drills take place on the first Tuesday of every quarter; the assembly point is the north car park.",
  "Overtime is paid at one and a half times the hourly rate and must be approved by the depot manager in advance.",
  "Lost property is held at the gatehouse for 30 days before it is donated to charity.",
  "Temperature-controlled trailers are pre-cooled to 3 °C for at least 45 minutes before loading.",
  "Annual leave requests go through the HR portal at least four weeks ahead; December leave is decided by lottery.",
];
const PADDING =
  "This section belongs to the depot handbook and should be read together with the general conditions of employment, " +
  "the site map posted in the canteen and the notices on the staff board, which are updated by the operations office " +
  "whenever a procedure changes. Colleagues who are unsure how a rule applies in practice ask their team leader first.";

interface Question {
  question: string;
  /** Document title that answers it, and its page (PDF); null: nothing in the documents answers it. */
  title: string | null;
  page?: number;
}

const QUESTIONS: Question[] = [
  { question: "When do loyalty points expire?", title: "Loyalty programme terms" },
  { question: "How many points do members earn per dollar?", title: "Loyalty programme terms" },
  { question: "What do gold members get on their birthday?", title: "Loyalty programme terms" },
  { question: "Can vouchers be exchanged for cash?", title: "Loyalty programme terms" },
  { question: "What temperature must the chillers hold?", title: "Store opening and closing checklist" },
  { question: "What should I do if the alarm panel shows a fault code?", title: "Store opening and closing checklist" },
  { question: "How much money is in the opening float of a till?", title: "Store opening and closing checklist" },
  { question: "How long are temperature logs kept?", title: "Store opening and closing checklist" },
  { question: "Which supplier delivers fresh produce in the West?", title: "Supplier delivery schedule" },
  { question: "What is the order cutoff for Northfield Dairy?", title: "Supplier delivery schedule" },
  { question: "When does the early shift start?", title: "Depot handbook", page: 2 },
  { question: "What must forklift drivers check before a shift?", title: "Depot handbook", page: 3 },
  { question: "Where are hazardous goods stored?", title: "Depot handbook", page: 4 },
  { question: "How quickly are returned goods inspected?", title: "Depot handbook", page: 5 },
  { question: "Where is the mascot costume kept?", title: "Depot handbook", page: 6 },
  { question: "What is the maximum pallet weight for stacking?", title: "Depot handbook", page: 7 },
  { question: "When do fire drills take place?", title: "Depot handbook", page: 8 },
  { question: "How is overtime paid?", title: "Depot handbook", page: 9 },
  { question: "How long is lost property held?", title: "Depot handbook", page: 10 },
  { question: "How long are refrigerated trailers pre-cooled?", title: "Depot handbook", page: 11 },
  { question: "How do I request annual leave?", title: "Depot handbook", page: 12 },
  { question: "What is the capital of France?", title: null },
  { question: "Describe penguin migration patterns in Antarctica", title: null },
  { question: "What was the quarterly revenue of the Berlin office?", title: null },
];

async function handbookPdf(): Promise<Buffer> {
  const doc = new PDFDocument({ size: "A4" });
  const parts: Buffer[] = [];
  doc.on("data", (c: Buffer) => parts.push(c));
  const done = new Promise<void>((resolve) => doc.on("end", () => resolve()));
  PDF_FACTS.forEach((fact, i) => {
    if (i > 0) doc.addPage();
    doc.fontSize(10).text(`${PADDING} ${fact} ${PADDING}`);
  });
  doc.end();
  await done;
  return Buffer.concat(parts);
}

/** Words too common to carry meaning, left out of the fake provider's vectors. */
const FAKE_STOP_WORDS = new Set("a an and are as at be by can do does for from how i in is it of on or the this to was what when where which who why will with you your".split(" "));

/**
 * The fake's embedding: hashed 5-letter word stems and character trigrams of the remaining words, square-root
 * weighted and L2-normalised, 1536 dimensions like text-embedding-3-small. Lexical like the offline embedder but
 * built differently (stems and trigrams, not whole words), so the two give different rankings; it stands in for
 * OpenAI's model, which no bench here can reach.
 */
function fakeOpenAiVector(text: string): number[] {
  const dims = 1536;
  const counts = new Map<number, number>();
  const add = (feature: string, weight: number) => {
    let h = 2166136261;
    for (let i = 0; i < feature.length; i++) h = Math.imul(h ^ feature.charCodeAt(i), 16777619);
    const slot = (h >>> 0) % dims;
    counts.set(slot, (counts.get(slot) ?? 0) + weight);
  };
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (FAKE_STOP_WORDS.has(word) || word.length < 3) continue;
    add(`w:${word.slice(0, 5)}`, 1);
    const padded = ` ${word} `;
    for (let i = 0; i + 3 <= padded.length; i++) add(`t:${padded.slice(i, i + 3)}`, 0.3);
  }
  const vector = new Array<number>(dims).fill(0);
  for (const [slot, count] of counts) vector[slot] = Math.sqrt(count);
  const norm = Math.hypot(...vector) || 1;
  return vector.map((v) => v / norm);
}

/** A loopback server answering OpenAI's POST /v1/embeddings, so the OpenAI provider's real client runs against it. */
async function fakeOpenAi(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as { model: string; input: string | string[] };
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", model: body.model, data: inputs.map((input, index) => ({ object: "embedding", index, embedding: fakeOpenAiVector(input) })), usage: { prompt_tokens: 1, total_tokens: 1 } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function measure(label: string) {
  await withSeededDb("pglite", async () => {
    await seedDemoDocuments();
    const record = await invoke(createDocument, admin, { body: { filename: "Depot handbook.pdf" } });
    const pdf = await handbookPdf();
    await uploadDocumentFile(admin, record.id, { body: new Blob([new Uint8Array(pdf)]).stream(), declaredType: "application/pdf", declaredLength: pdf.length, index: false });
    const indexed = await indexDocument(admin, record.id);
    const status = embeddingStatus();
    console.log(`\n${label}: embedder ${status.provider}/${status.model} (${status.dims} dims); the handbook PDF: 12 pages, ${indexed.chunk_count} chunks`);

    for (const mode of ["vector", "hybrid"] as const) {
      let found = 0;
      let reciprocal = 0;
      let answerable = 0;
      let unanswerableWithHits = 0;
      let answerKept = 0;
      const misses: string[] = [];
      const relevances: number[] = [];
      for (const q of QUESTIONS) {
        // Search presents only matches (the relevance floor, lib/documents/search/relevance.ts): what it answers is what chat cites from.
        const { results } = await searchDocuments(admin, { query: q.question, top_k: 5, mode, document_ids: null, model: null });
        if (q.title === null) {
          if (results.length > 0) {
            unanswerableWithHits += 1;
            misses.push(`  unanswerable "${q.question}" still matched ${results[0].document_title} (relevance ${Math.round(results[0].relevance * 100)} %, ${results[0].terms_matched} of its words)`);
          }
          continue;
        }
        answerable += 1;
        if (results.some((hit) => hit.document_title === q.title)) answerKept += 1;
        const rank = results.findIndex((hit) => hit.document_title === q.title && (q.page === undefined || hit.page === q.page));
        if (rank >= 0) {
          found += 1;
          reciprocal += 1 / (rank + 1);
          relevances.push(results[rank].relevance);
        } else {
          const top = results[0];
          misses.push(`  miss: "${q.question}" (want ${q.title}${q.page ? ` p.${q.page}` : ""}; top: ${top ? `${top.document_title}${top.page ? ` p.${top.page}` : ""}` : "nothing"})`);
        }
      }
      relevances.sort((a, b) => a - b);
      console.log(
        `  ${mode.padEnd(6)} recall@5 ${(found / answerable).toFixed(2)} (${found}/${answerable})  MRR ${(reciprocal / answerable).toFixed(2)}  ` +
          `right document above the floor ${answerKept}/${answerable}; right hits' relevance ${relevances.length ? `${Math.round(relevances[0] * 100)}-${Math.round(relevances[relevances.length - 1] * 100)} %` : "-"}; ` +
          `unanswerable questions with any hit: ${unanswerableWithHits}/${QUESTIONS.length - answerable}`,
      );
      for (const miss of misses) console.log(miss);
    }
  });
}

export default async function relevance() {
  // The configured provider (EMBEDDING_PROVIDER_CONFIG; unset: the offline embedder), then the OpenAI provider
  // against the loopback fake: its client, its 1536-dim HNSW index and the semantic clause of the floor.
  embeddingProvidersSingleton.set(undefined);
  await measure("configured provider");
  const fake = await fakeOpenAi();
  try {
    embeddingProvidersSingleton.set(new EmbeddingProviders({ ...LOCAL_EMBEDDING_SETTINGS, default_provider: "openai", openai: { api_key: "sk-bench-fake", base_url: fake.url } }));
    await measure("OpenAI provider, loopback fake");
  } finally {
    embeddingProvidersSingleton.set(undefined);
    await fake.close();
  }
}
