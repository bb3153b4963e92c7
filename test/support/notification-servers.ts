// Real servers on 127.0.0.1 for notification tests: an SMTP server that keeps
// what it receives, and an HTTP server standing in for Slack and webhook
// receivers that records payloads and can be told to fail.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/** `rejectWith` decides per message: an SMTP reply code to refuse MAIL FROM with (421: service down), or null to accept. */
export async function startSmtp() {
  const received: ReceivedMail[] = [];
  const state: { rejectWith: () => number | null } = { rejectWith: () => null };
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username });
    },
    logger: false,
    onMailFrom(_address, _session, callback) {
      const code = state.rejectWith();
      if (code) return callback(Object.assign(new Error("Service not available, try again later"), { responseCode: code }));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, received, state, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** `failWith` decides per request: a status to answer with instead of 200, or null to accept. */
export async function startReceiver() {
  const received: ReceivedRequest[] = [];
  const state: { failWith: (req: ReceivedRequest) => number | null; apiReply: (req: ReceivedRequest) => object } = {
    failWith: () => null,
    // What the Slack Web API stand-in (paths under /api/) answers with HTTP 200; `ok: false` is a Slack platform error.
    apiReply: () => ({ ok: true, channel: "C1", ts: "1.0" }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const entry = { path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      const status = state.failWith(entry);
      if (status) {
        // A redirect points at /hook, so a client that followed it would be seen arriving there.
        res.writeHead(status, status >= 300 && status < 400 ? { location: "/hook" } : {}).end("unavailable");
        return;
      }
      received.push(entry);
      res.writeHead(200, { "content-type": entry.path.startsWith("/api/") ? "application/json" : "text/plain" });
      res.end(entry.path.startsWith("/api/") ? JSON.stringify(state.apiReply(entry)) : "ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { port, url: `http://127.0.0.1:${port}`, received, state, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
