import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect } from "vitest";
import type { EmbeddingProviderOptions } from "@/lib/embeddings";
import { httpViewOf } from "@/lib/api/errors";
import { DomainError } from "@/lib/errors";

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

/** Provider options whose retry backoff is a few milliseconds, so retry tests run fast. */
export const FAST_BACKOFF: EmbeddingProviderOptions = { backoff: { backoffBaseMs: 5, backoffMaxMs: 20 } };

/**
 * For a test file that starts its own server in each test: start() opens one, and every server
 * started in a test is closed after it, even when the test failed half-way. Closing one the test
 * already closed is harmless.
 */
export function loopbackPerTest(): { start: (handler: LoopbackHandler) => Promise<LoopbackServer> } {
  const started: LoopbackServer[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((server) => server.close()));
  });
  return {
    start: async (handler) => {
      const server = await startLoopback(handler);
      started.push(server);
      return server;
    },
  };
}

/** A deterministic vector of `dims` numbers for text `i`, so tests can check order. */
export function fakeVector(seed: number, dims: number): number[] {
  return Array.from({ length: dims }, (_, k) => ((seed * 31 + k) % 97) / 97);
}

/**
 * What the API caller would receive for the domain error a provider call was rejected with (status,
 * detail, headers); fails the test if it resolved or threw anything else.
 */
export async function rejection(promise: Promise<unknown>): Promise<ReturnType<typeof httpViewOf>> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return httpViewOf(error as DomainError);
}
