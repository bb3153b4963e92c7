import http from "node:http";
import type { AddressInfo } from "node:net";

/*
 * Test support: a real HTTP server on 127.0.0.1 standing in for a provider's API, so each
 * provider's real client code (SDK, OAuth exchange, fetch) runs unchanged against it.
 */

export interface RecordedRequest {
  method: string;
  /** Path and query, as received. */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type LoopbackHandler = (request: RecordedRequest, response: http.ServerResponse) => void | Promise<void>;

export interface LoopbackServer {
  /** http://127.0.0.1:<port> */
  url: string;
  host: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export function sendJson(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

export async function startLoopback(handler: LoopbackHandler): Promise<LoopbackServer> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const recorded: RecordedRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      requests.push(recorded);
      Promise.resolve(handler(recorded, res)).catch((error: unknown) => sendJson(res, 599, { detail: `loopback handler failed: ${String(error)}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        // Hung requests (timeout tests) would keep close() waiting forever.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A deterministic vector of `dims` numbers for text `i`, so tests can check order. */
export function fakeVector(seed: number, dims: number): number[] {
  return Array.from({ length: dims }, (_, k) => ((seed * 31 + k) % 97) / 97);
}
