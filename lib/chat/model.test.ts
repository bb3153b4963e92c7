import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatModelSettings } from "@/lib/config/chat";
import { rejection } from "@/test/support/embedding-server";
import { openChatStream, type ModelPiece } from "./model";
import { buildPrompt, excerpt, passagesAnswer, PASSAGES_LABEL, type PromptSource } from "./prompt";
import { startChatServer } from "@/test/support/chat-server";

let server: Awaited<ReturnType<typeof startChatServer>>;
beforeAll(async () => {
  server = await startChatServer();
});
afterAll(() => server.close());

const KEY = "sk-test-secret-0123456789";
const settings = (extra: Partial<ChatModelSettings> = {}): ChatModelSettings => ({
  base_url: server.baseUrl,
  api_key: KEY,
  model: "test-model",
  max_context_chunks: 6,
  temperature: 0.1,
  max_tokens: 256,
  request_timeout_ms: 5000,
  ...extra,
});

const source = (n: number, extra: Partial<PromptSource> = {}): PromptSource => ({
  n,
  document_title: `Doc ${n}`,
  filename: `doc-${n}.pdf`,
  page_start: n,
  page_end: n + 1,
  row_start: null,
  row_end: null,
  text: `Passage number ${n} says the turbine needs oil every ${n * 100} hours.`,
  ...extra,
});

async function collect(pieces: AsyncIterable<ModelPiece>) {
  const out: ModelPiece[] = [];
  for await (const piece of pieces) out.push(piece);
  return out;
}

describe("prompt", () => {
  it("numbers the sources, asks for citations and keeps the conversation with the question last", () => {
    const prompt = buildPrompt("Acme Corp", [
      { role: "user", content: "What is a turbine?" },
      { role: "assistant", content: "A machine [1]." },
      { role: "user", content: "How often does it need oil?" },
    ], [source(1), source(2, { page_start: 7, page_end: 7 }), source(3, { page_start: null, page_end: null, row_start: 4, row_end: 9 })]);
    expect(prompt.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    const system = prompt[0].content;
    expect(system).toContain("Acme Corp");
    expect(system).toMatch(/cite the sources .* \[1\]/);
    expect(system).toContain("[1] Doc 1 (doc-1.pdf), pages 1–2\nPassage number 1");
    expect(system).toContain("[2] Doc 2 (doc-2.pdf), page 7\n");
    expect(system).toContain("[3] Doc 3 (doc-3.pdf), rows 4–9\n");
    expect(prompt[3].content).toBe("How often does it need oil?");
  });

  it("drops the oldest turns beyond the history budget but never the question", () => {
    const long = "x".repeat(7000);
    const prompt = buildPrompt("Acme", [
      { role: "user", content: long },
      { role: "assistant", content: long },
      { role: "user", content: long },
      { role: "assistant", content: "short" },
      { role: "user", content: "question?" },
    ], [source(1)]);
    expect(prompt.slice(1).map((m) => m.content)).toEqual([long, "short", "question?"]);
  });

  it("shortens passages around the sentences that share the question's words", () => {
    const long = `${"Filler words about nothing in particular. ".repeat(30)}The impeller seals wear out after 750 hours. ${"More filler follows here. ".repeat(30)}`;
    const shown = excerpt(long, 120, "When do impeller seals wear out?");
    expect(shown).toMatch(/^…The impeller seals wear out after 750 hours\./);
    expect(shown.endsWith("…")).toBe(true);
    expect(shown.length).toBeLessThanOrEqual(122);
    expect(excerpt(long, 120)).toMatch(/^Filler words/);
    expect(excerpt("short text", 120, "text")).toBe("short text");
  });

  it("labels the passages answer and cites each passage", () => {
    const text = passagesAnswer([source(1), source(2)]);
    expect(text.startsWith(PASSAGES_LABEL)).toBe(true);
    expect(text).toContain("[1] Doc 1, pages 1–2: “Passage number 1");
    expect(text).toContain("[2] Doc 2, pages 2–3:");
    expect(passagesAnswer([])).toContain("No indexed passage matches");
  });
});

describe("chat model client (openai SDK against a loopback server)", () => {
  it("sends the documented request and yields the streamed pieces in order", async () => {
    server.answerWith({ kind: "stream", pieces: ["The turbine ", "needs oil ", "every 100 hours [1]."] });
    const before = server.requests.length;
    const messages = buildPrompt("Acme", [{ role: "user", content: "How often?" }], [source(1)]);
    const pieces = await collect(await openChatStream(settings(), messages, new AbortController().signal));
    expect(pieces).toEqual([
      { kind: "text", text: "The turbine " },
      { kind: "text", text: "needs oil " },
      { kind: "text", text: "every 100 hours [1]." },
      { kind: "finish", reason: "stop" },
    ]);
    const seen = server.requests[before];
    expect(seen.method).toBe("POST");
    expect(seen.path).toBe("/v1/chat/completions");
    expect(seen.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(seen.body).toMatchObject({ model: "test-model", stream: true, temperature: 0.1, max_tokens: 256 });
    expect(seen.body.messages).toEqual(messages);
  });

  it("sends no Authorization header when no api_key is configured", async () => {
    server.answerWith({ kind: "stream", pieces: ["ok"] });
    const before = server.requests.length;
    await collect(await openChatStream(settings({ api_key: undefined }), [{ role: "user", content: "hi" }], new AbortController().signal));
    expect(server.requests[before].headers.authorization).toBeUndefined();
  });

  it("reports a refused key as 502 without repeating the key", async () => {
    server.answerWith({ kind: "status", status: 401, message: `Incorrect API key provided: ${KEY}` });
    const error = await rejection(openChatStream(settings(), [{ role: "user", content: "hi" }], new AbortController().signal));
    expect(error.status).toBe(502);
    expect(String(error.detail)).toMatch(/^The chat model failed: 401/);
    expect(String(error.detail)).not.toContain(KEY);
  });

  it("reports an unreachable server as 502", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await rejection(openChatStream(settings({ base_url: `http://127.0.0.1:${port}/v1` }), [{ role: "user", content: "hi" }], new AbortController().signal));
    expect(error.status).toBe(502);
    expect(String(error.detail)).toContain("cannot be reached");
  });

  it("gives up on a server that never answers with 504", async () => {
    server.answerWith({ kind: "hang" });
    const error = await rejection(openChatStream(settings({ request_timeout_ms: 1000 }), [{ role: "user", content: "hi" }], new AbortController().signal));
    expect(error.status).toBe(504);
  });

  it("keeps the pieces that arrived and then fails when the stream is cut", async () => {
    server.answerWith({ kind: "cut-after", pieces: ["Partial ", "answer"] });
    const seen: ModelPiece[] = [];
    const stream = await openChatStream(settings(), [{ role: "user", content: "hi" }], new AbortController().signal);
    const error = await rejection(
      (async () => {
        for await (const piece of stream) seen.push(piece);
      })(),
    );
    expect(seen).toEqual([{ kind: "text", text: "Partial " }, { kind: "text", text: "answer" }]);
    expect(error.status).toBe(502);
  });
});
