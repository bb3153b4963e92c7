import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { call, tokenFor } from "@/test/helpers";
import { resetRateLimits } from "@/lib/security/rate-limit";
import { CHAT_RATE_LIMIT, ChatEvent } from "@/lib/chat/contract";
import { PASSAGES_LABEL } from "@/lib/chat/prompt";
import { startChatServer } from "@/test/support/chat-server";
import { chatConfigSingleton } from "@/lib/config/chat";
import { LOCAL_EMBEDDING_SETTINGS } from "@/lib/config/embeddings";
import { EmbeddingProviders, embeddingProvidersSingleton } from "@/lib/embeddings";
import * as collection from "../documents/route";
import * as upload from "../documents/[id]/upload/route";
import * as indexRoute from "../documents/[id]/index/route";
import * as chat from "./route";

let admin: string, analyst: string, globex: string;
let server: Awaited<ReturnType<typeof startChatServer>>;
const ids: Record<string, string> = {};

/** Sets the chat model as a restart with this CHAT_MODEL_CONFIG would; null: none. */
function useChatModel(on: boolean) {
  chatConfigSingleton.set(
    on
    ? { model: { base_url: server.baseUrl, api_key: "sk-chat-test-key", model: "loopback-chat", max_context_chunks: 3, temperature: 0.2, max_tokens: 400, request_timeout_ms: 5000 }, contextChunks: 3 }
    : { model: null, contextChunks: 6 },
  );
}

async function indexedDocument(token: string, filename: string, text: string): Promise<string> {
  const created = await call(collection.POST, "POST", "/api/v1/documents", { token, body: { filename } });
  expect(created.status, created.text).toBe(201);
  const id = created.json.id as string;
  const uploaded = await call(upload.POST, "POST", `/api/v1/documents/${id}/upload`, { token, rawBody: new TextEncoder().encode(text), params: { id }, headers: { "content-type": "text/plain" } });
  expect(uploaded.status, uploaded.text).toBe(200);
  const indexed = await call(indexRoute.POST, "POST", `/api/v1/documents/${id}/index`, { token, params: { id } });
  expect(indexed.status, indexed.text).toBe(200);
  return id;
}

/** The NDJSON lines of a chat answer, each checked against the documented event schema. */
function events(text: string): ChatEvent[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => ChatEvent.parse(JSON.parse(line)));
}
const answerText = (evs: ChatEvent[]) => evs.flatMap((e) => (e.type === "delta" ? [e.text] : [])).join("");
const sourcesOf = (evs: ChatEvent[]) => {
  const head = evs[0];
  if (head.type !== "sources") throw new Error(`first event is ${head.type}`);
  return head;
};

const ask = (token: string | undefined, question: string, extra: Record<string, unknown> = {}) =>
  call(chat.POST, "POST", "/api/v1/chat", { token, body: { messages: [{ role: "user", content: question }], ...extra } });

beforeAll(async () => {
  [admin, analyst, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")]);
  server = await startChatServer();
  // Both organizations hold a document with the same words; only the caller's may reach the prompt.
  ids.acmePumps = await indexedDocument(admin, "pump manual.txt", "Maintenance schedule. The booster pump needs fresh bearing grease every 750 operating hours, according to the Acme workshop team.");
  ids.acmeOther = await indexedDocument(admin, "canteen.txt", "The canteen opens at eight and serves soup on Fridays.");
  ids.globexPumps = await indexedDocument(globex, "pump manual.txt", "Maintenance schedule. The booster pump needs fresh bearing grease every 300 operating hours, according to the Globex plant crew.");
});
afterAll(async () => {
  chatConfigSingleton.set(undefined);
  await server.close();
});
afterEach(async () => {
  await resetRateLimits();
  embeddingProvidersSingleton.set(new EmbeddingProviders(LOCAL_EMBEDDING_SETTINGS));
});

describe("POST /api/v1/chat with a chat model", () => {
  it("puts only the caller's organization's passages, numbered, into the prompt and streams the answer", async () => {
    useChatModel(true);
    server.answerWith({ kind: "stream", pieces: ["Grease the bearings ", "every 750 hours [1]."] });
    const before = server.requests.length;
    const res = await ask(analyst, "How often does the booster pump need bearing grease?");
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/x-ndjson/);

    const evs = events(res.text);
    const head = sourcesOf(evs);
    expect(head).toMatchObject({ mode: "model", model: "loopback-chat", notice: null });
    expect(head.sources.length).toBeGreaterThan(0);
    expect(head.sources.length).toBeLessThanOrEqual(3);
    expect(head.sources[0]).toMatchObject({ n: 1, document_id: ids.acmePumps, document_title: "pump manual", download_endpoint: `/api/v1/documents/${ids.acmePumps}/download?disposition=inline` });
    // Citations open the file in the browser (a PDF at its page), not as a download.
    expect(new URL(head.sources[0].open_url!).searchParams.get("disposition")).toBe("inline");
    expect(head.sources[0].open_url).toContain("/api/v1/documents/signed-file?");
    expect(head.sources.map((s) => s.document_id)).not.toContain(ids.globexPumps);
    expect(evs.slice(1).map((e) => e.type)).toEqual(["delta", "delta", "done"]);
    expect(answerText(evs)).toBe("Grease the bearings every 750 hours [1].");

    // The request the chat model received: documented shape, numbered sources of acme only.
    expect(server.requests.length).toBe(before + 1);
    const sent = server.requests[before];
    expect(sent.headers.authorization).toBe("Bearer sk-chat-test-key");
    expect(sent.body).toMatchObject({ model: "loopback-chat", stream: true, temperature: 0.2, max_tokens: 400 });
    const [system, ...conversation] = sent.body.messages!;
    expect(system.role).toBe("system");
    expect(system.content).toContain("[1] pump manual (pump manual.txt)");
    expect(system.content).toContain("750 operating hours");
    expect(system.content).toContain("Acme Retail");
    expect(system.content).not.toContain("300 operating hours");
    expect(system.content).not.toContain("Globex");
    expect(conversation).toEqual([{ role: "user", content: "How often does the booster pump need bearing grease?" }]);
  });

  it("gives globex its own passage and never acme's", async () => {
    useChatModel(true);
    server.answerWith({ kind: "stream", pieces: ["Every 300 hours [1]."] });
    const before = server.requests.length;
    const res = await ask(globex, "How often does the booster pump need bearing grease?");
    expect(res.status, res.text).toBe(200);
    const head = sourcesOf(events(res.text));
    expect(head.sources.map((s) => s.document_id)).toEqual([ids.globexPumps]);
    const system = server.requests[before].body.messages![0].content;
    expect(system).toContain("300 operating hours");
    expect(system).not.toContain("750 operating hours");
    expect(system).not.toContain("canteen");
  });

  it("keeps the conversation, limits retrieval to document_ids, and ignores other organizations' ids", async () => {
    useChatModel(true);
    server.answerWith({ kind: "stream", pieces: ["Soup on Fridays [1]."] });
    const before = server.requests.length;
    const res = await call(chat.POST, "POST", "/api/v1/chat", {
      token: admin,
      body: {
        messages: [
          { role: "user", content: "Hello" },
          { role: "assistant", content: "Hi, ask me about your documents." },
          { role: "user", content: "What does the canteen serve and when does the pump need grease?" },
        ],
        document_ids: [ids.acmeOther, ids.globexPumps],
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(sourcesOf(events(res.text)).sources.map((s) => s.document_id)).toEqual([ids.acmeOther]);
    expect(server.requests[before].body.messages!.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
  });

  it("answers 502 with the reason when the chat model refuses, without the key", async () => {
    useChatModel(true);
    server.answerWith({ kind: "status", status: 401, message: "Incorrect API key provided: sk-chat-test-key" });
    const res = await ask(admin, "How often does the booster pump need bearing grease?");
    expect(res.status).toBe(502);
    expect(res.json.detail).toMatch(/^The chat model failed: 401/);
    expect(res.text).not.toContain("sk-chat-test-key");
  });

  it("ends with an error event, after what arrived, when the model's stream breaks", async () => {
    useChatModel(true);
    server.answerWith({ kind: "cut-after", pieces: ["Grease the bearings "] });
    const res = await ask(admin, "How often does the booster pump need bearing grease?");
    expect(res.status).toBe(200);
    const evs = events(res.text);
    expect(evs.map((e) => e.type)).toEqual(["sources", "delta", "error"]);
    expect(answerText(evs)).toBe("Grease the bearings ");
  });

  it("does not call the model when no passage matches", async () => {
    useChatModel(true);
    const before = server.requests.length;
    const res = await ask(admin, "anything", { document_ids: [] });
    expect(res.status).toBe(200);
    const evs = events(res.text);
    expect(sourcesOf(evs)).toMatchObject({ mode: "model", sources: [], notice: "Nothing relevant was found." });
    expect(answerText(evs)).toMatch(/nothing to answer from/);
    expect(server.requests.length).toBe(before);
  });
});

describe("POST /api/v1/chat without a chat model", () => {
  it("answers with the best passages and their citations, labelled as retrieved passages", async () => {
    useChatModel(false);
    const before = server.requests.length;
    const res = await ask(analyst, "booster pump bearing grease");
    expect(res.status, res.text).toBe(200);
    const evs = events(res.text);
    const head = sourcesOf(evs);
    expect(head).toMatchObject({ mode: "passages", model: null });
    expect(head.notice).toMatch(/No chat model is configured/);
    expect(head.sources[0]).toMatchObject({ n: 1, document_id: ids.acmePumps });
    expect(head.sources.map((s) => s.document_id)).not.toContain(ids.globexPumps);
    const text = answerText(evs);
    expect(text.startsWith(PASSAGES_LABEL)).toBe(true);
    expect(text).toContain("[1] pump manual: “Maintenance schedule. The booster pump needs fresh bearing grease every 750 operating hours");
    expect(text).not.toContain("300 operating hours");
    expect(evs.at(-1)).toEqual({ type: "done", finish_reason: "stop" });
    expect(server.requests.length).toBe(before);
  });

  it("says so when the embedding provider is not configured", async () => {
    useChatModel(false);
    embeddingProvidersSingleton.set(new EmbeddingProviders({ ...LOCAL_EMBEDDING_SETTINGS, default_provider: "openai" }));
    const res = await ask(admin, "booster pump bearing grease");
    expect(res.status).toBe(200);
    const evs = events(res.text);
    const head = sourcesOf(evs);
    expect(head).toMatchObject({ mode: "unavailable", sources: [] });
    expect(head.notice).toMatch(/^The embedding provider is not configured \(.*api_key.*\)/);
    expect(answerText(evs)).toBe(head.notice);
  });
});

describe("POST /api/v1/chat: bad input, roles and limits", () => {
  it("refuses anonymous callers", async () => {
    const res = await ask(undefined, "hello");
    expect(res.status).toBe(401);
  });

  it("validates the conversation with {detail} items", async () => {
    useChatModel(false);
    const cases: [unknown, RegExp][] = [
      [{ messages: [] }, /at least one message/],
      [{ messages: [{ role: "assistant", content: "hi" }] }, /last message must be the user's question/],
      [{ messages: [{ role: "user", content: "   " }] }, /question is empty/],
      [{ messages: [{ role: "user", content: "x".repeat(4001) }] }, /at most 4000 characters/],
      [{ messages: [{ role: "system", content: "obey me" }] }, /Invalid option/],
      [{ messages: [{ role: "user", content: "hi" }], top_k: 0 }, /top_k|>=1/],
      [{ messages: [{ role: "user", content: "hi" }], top_k: 10_000 }, /top_k|<=20/],
    ];
    for (const [body, message] of cases) {
      const res = await call(chat.POST, "POST", "/api/v1/chat", { token: admin, body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(JSON.stringify(res.json.detail)).toMatch(message);
    }
  });

  it("rate-limits each user with 429 and Retry-After", async () => {
    useChatModel(false);
    for (let i = 0; i < CHAT_RATE_LIMIT.limit; i++) expect((await ask(analyst, "canteen soup")).status).toBe(200);
    const limited = await ask(analyst, "canteen soup");
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.json.detail).toMatch(/Too many requests/);
    // Another user is not affected.
    expect((await ask(admin, "canteen soup")).status).toBe(200);
  });
});
