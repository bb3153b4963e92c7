// npm run bench -- relevance: how well search finds the passage that answers a question (issue 28 §3).
// A labelled set, kept here: questions over the demo documents (docs/demo-documents) and over a 12-page
// PDF made below (one fact per page, pages of about 150 words, so a 500-word chunk spans several pages),
// each with the document and, for the PDF, the page that answers it; plus questions no document answers.
// For each search mode it prints recall@5 (the right document, and page where one is labelled, among
// the first five hits), MRR (1 / rank of the first right hit), and how many unanswerable questions
// still got hits. It uses the configured embedding provider (EMBEDDING_PROVIDER_CONFIG; unset: the
// offline word-matching embedder): run it once per provider to compare embedders.
import PDFDocument from "pdfkit";
import type { Principal } from "@/lib/auth/roles";
import { seedDemoDocuments } from "@/lib/documents/demo";
import { createDocument } from "@/lib/documents/operations";
import { indexDocument } from "@/lib/documents/index-document";
import { searchDocuments } from "@/lib/documents/search";
import { uploadDocumentFile } from "@/lib/documents/upload";
import { embeddingStatus } from "@/lib/embeddings";
import { invoke } from "@/lib/operation";
import { isRelevant } from "@/lib/chat/prompt";
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

export default async function relevance() {
  await withSeededDb("pglite", async () => {
    await seedDemoDocuments();
    const record = await invoke(createDocument, admin, { body: { filename: "Depot handbook.pdf" } });
    const pdf = await handbookPdf();
    await uploadDocumentFile(admin, record.id, { body: new Blob([new Uint8Array(pdf)]).stream(), declaredType: "application/pdf", declaredLength: pdf.length, index: false });
    const indexed = await indexDocument(admin, record.id);
    const status = embeddingStatus();
    console.log(`embedder ${status.provider}/${status.model}; the handbook PDF: 12 pages, ${indexed.chunk_count} chunks`);

    for (const mode of ["vector", "hybrid"] as const) {
      let found = 0;
      let reciprocal = 0;
      let answerable = 0;
      let unanswerableWithHits = 0;
      // What chat would cite (lib/chat/prompt.ts isRelevant): the right passage kept, and nothing kept where nothing answers.
      let chatKeepsAnswer = 0;
      let chatCitesUnanswerable = 0;
      const semantic = embeddingStatus().provider !== "local";
      const misses: string[] = [];
      for (const q of QUESTIONS) {
        const { results } = await searchDocuments(admin, { query: q.question, top_k: 5, mode, document_ids: null, model: null });
        if (q.title === null) {
          if (results.length > 0) unanswerableWithHits += 1;
          if (results.some((hit) => isRelevant(hit, semantic))) chatCitesUnanswerable += 1;
          continue;
        }
        if (results.some((hit) => hit.document_title === q.title && isRelevant(hit, semantic))) chatKeepsAnswer += 1;
        answerable += 1;
        const rank = results.findIndex((hit) => hit.document_title === q.title && (q.page === undefined || hit.page === q.page));
        if (rank >= 0) {
          found += 1;
          reciprocal += 1 / (rank + 1);
        } else {
          const top = results[0];
          misses.push(`  miss: "${q.question}" (want ${q.title}${q.page ? ` p.${q.page}` : ""}; top: ${top ? `${top.document_title}${top.page ? ` p.${top.page}` : ""}` : "nothing"})`);
        }
      }
      console.log(
        `${mode.padEnd(6)} recall@5 ${(found / answerable).toFixed(2)} (${found}/${answerable})  MRR ${(reciprocal / answerable).toFixed(2)}  ` +
          `unanswerable questions with hits: ${unanswerableWithHits}/${QUESTIONS.length - answerable}; ` +
          `chat relevance: answer kept ${chatKeepsAnswer}/${answerable}, unanswerable cited ${chatCitesUnanswerable}/${QUESTIONS.length - answerable}`,
      );
      for (const miss of misses) console.log(miss);
    }
  });
}
