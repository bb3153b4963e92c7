// One app replica for the topology tests (test/topology/*.test.ts): runs the real start-up
// (lib/boot.ts: migrations, demo data, under the advisory lock), then serves the real route
// handlers over HTTP. A request `POST /call` names the route module and what to send:
// {"module": "app/api/v1/…", "method": "POST", "url": "/…", "token": "…", "body": …, "params": {…}, "headers": {…}}.
// Prints `READY <port>` once started. The test runs the production code, only the Next.js
// router is replaced (building the app for a test would take minutes).
import http from "node:http";
import { NextRequest } from "next/server";
import { boot } from "@/lib/boot";
import { endpointUrl } from "@/test/helpers";

type Handler = Parameters<typeof endpointUrl>[0];

interface CallRequest {
  module: string;
  method: string;
  /** Default: the handler's own endpoint path with `params` filled in. */
  url?: string;
  token?: string;
  body?: unknown;
  /** Sent as is (an upload's file), with the caller's own content-type header. */
  rawBody?: string;
  params?: Record<string, string | string[]>;
  headers?: Record<string, string>;
}

await boot();

const server = http.createServer((req, res) => {
  let raw = "";
  req.setEncoding("utf8");
  req.on("data", (chunk: string) => (raw += chunk));
  req.on("end", () => {
    void (async () => {
      try {
        const call = JSON.parse(raw) as CallRequest;
        const mod = (await import(`@/${call.module}/route`)) as Record<string, Handler>;
        const headers = new Headers(call.headers);
        if (call.token) headers.set("authorization", `Bearer ${call.token}`);
        if (call.body !== undefined) headers.set("content-type", "application/json");
        const request = new NextRequest(new URL(call.url ?? endpointUrl(mod[call.method], call.params ?? {}), "http://127.0.0.1"), {
          method: call.method,
          headers,
          body: call.rawBody ?? (call.body === undefined ? undefined : JSON.stringify(call.body)),
        });
        const response = await mod[call.method](request, { params: Promise.resolve(call.params ?? {}) });
        res.writeHead(response.status, { "content-type": response.headers.get("content-type") ?? "application/octet-stream" });
        res.end(Buffer.from(await response.arrayBuffer()));
      } catch (error) {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(error instanceof Error ? error.stack : String(error));
      }
    })();
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(`READY ${typeof address === "object" && address ? address.port : 0}`);
});
