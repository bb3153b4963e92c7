// The app's HTTP server: Next's request handler behind a plain node:http server that stamps each request
// with its socket's remote address. Route handlers cannot see the socket, and X-Forwarded-For is whatever
// the client wrote (Next only fills it in when absent), so rate limits and sign-in throttling key on this
// header instead (lib/security/client-address.ts). A client-sent copy is always overwritten, and the key proves
// the stamp came from this process.
import crypto from "node:crypto";
import http from "node:http";
import next from "next";

const PEER_HEADER = "x-quarry-peer";
const PEER_KEY_HEADER = "x-quarry-peer-key";
const peerKey = crypto.randomBytes(24).toString("base64url");
globalThis[Symbol.for("quarry.peerKey")] = peerKey;

const port = Number(process.env.PORT ?? "3000");
// All interfaces, as `next start` does (HOSTNAME is often the machine's name in containers, so it is not read).
const app = next({ dev: false, hostname: "localhost", port });
await app.prepare();
const handle = app.getRequestHandler();

const server = http.createServer((req, res) => {
  req.headers[PEER_HEADER] = req.socket.remoteAddress ?? "";
  req.headers[PEER_KEY_HEADER] = peerKey;
  handle(req, res);
});
server.listen(port, () => console.log(`Quarry listening on http://localhost:${port}`));
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    // Idle keep-alive connections would hold close() open.
    setTimeout(() => process.exit(0), 3000).unref();
  });
}
