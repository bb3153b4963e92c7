import http from "node:http";
import type { AddressInfo } from "node:net";

/** What the loopback server saw of one request. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: {
    model?: unknown;
    stream?: unknown;
    temperature?: unknown;
    max_tokens?: unknown;
    messages?: { role: string; content: string }[];
  };
}

/** How the server answers the next requests: stream these text pieces, fail with a status, hang, or cut the stream. */
export type Behaviour =
  | { kind: "stream"; pieces: string[]; finish?: string }
  | { kind: "status"; status: number; message: string }
  | { kind: "hang" }
  | { kind: "cut-after"; pieces: string[] };

/**
 * An OpenAI-compatible chat completions server on 127.0.0.1: it checks the
 * documented request shape (POST /v1/chat/completions, JSON with model,
 * messages and stream: true) and streams Server-Sent Events the way the API
 * does (`data: {chunk}` lines, then `data: [DONE]`).
 */
export async function startChatServer() {
  const requests: RecordedRequest[] = [];
  let behaviour: Behaviour = { kind: "stream", pieces: ["Hello"] };
  const sockets = new Set<import("node:net").Socket>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: RecordedRequest["body"] = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        body = {};
      }
      requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body });
      const shapeProblem =
        req.method !== "POST" || req.url !== "/v1/chat/completions"
          ? `unexpected ${req.method} ${req.url}`
          : !String(req.headers["content-type"]).startsWith("application/json")
            ? "content-type must be application/json"
            : typeof body.model !== "string" || !Array.isArray(body.messages) || body.messages.length === 0
              ? "model and messages are required"
              : body.stream !== true
                ? "stream must be true"
                : body.messages.some((m) => !["system", "user", "assistant"].includes(m.role) || typeof m.content !== "string")
                  ? "each message needs a role and string content"
                  : null;
      if (shapeProblem) {
        res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: shapeProblem, type: "invalid_request_error" } }));
        return;
      }
      const current = behaviour;
      if (current.kind === "hang") return;
      if (current.kind === "status") {
        res.writeHead(current.status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: current.message, type: "error" } }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      const chunk = (delta: Record<string, unknown>, finish: string | null) =>
        `data: ${JSON.stringify({ id: "chatcmpl-test", object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.write(chunk({ role: "assistant", content: "" }, null));
      for (const piece of current.pieces) res.write(chunk({ content: piece }, null));
      if (current.kind === "cut-after") {
        // Let the pieces reach the client before the connection dies.
        setTimeout(() => req.socket.destroy(), 50);
        return;
      }
      res.write(chunk({}, current.finish ?? "stop"));
      res.end("data: [DONE]\n\n");
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    answerWith(next: Behaviour) {
      behaviour = next;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
