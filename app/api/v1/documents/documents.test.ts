import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { Readable } from "node:stream";
import { NextRequest } from "next/server";
import { beforeAll, describe, expect, it } from "vitest";
import { call, tokenFor } from "@/test/helpers";
import { withTenant } from "@/lib/db/tenant";
import { csvFile, docxFile, pdfFile, txtFile, zipWithoutWord } from "@/test/support/document-files";
import * as collection from "./route";
import * as one from "./[id]/route";
import * as upload from "./[id]/upload/route";
import * as download from "./[id]/download/route";
import * as constraints from "./upload-constraints/route";
import * as signedFile from "./signed-file/route";

// A small limit keeps the oversize cases fast; read once, at first use.
const MAX_BYTES = 256 * 1024;
process.env.DOCUMENT_MAX_BYTES = String(MAX_BYTES);

let admin: string, analyst: string, manager: string, globex: string;
beforeAll(async () => {
  [admin, analyst, manager, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("acme", "general_manager"), tokenFor("globex", "admin")]);
});
const sha256 = (b: Buffer) => crypto.createHash("sha256").update(b).digest("hex");

const objectsDir = () => path.join(process.env.QUARRY_DATA_DIR!, "objects", "documents");
/** Every stored object of a document (temporary files excluded). */
function storedObjects(orgId: string, id: string): string[] {
  const dir = path.join(objectsDir(), orgId, id);
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

async function create(filename: string, extra: Record<string, unknown> = {}, token?: string) {
  token ??= admin;
  return call(collection.POST, "POST", "/api/v1/documents", { token, body: { filename, ...extra } });
}
async function put(id: string, data: Buffer | string | ReadableStream<Uint8Array>, options: { token?: string; type?: string; query?: string; headers?: Record<string, string> } = {}) {
  return call(upload.POST, "POST", `/api/v1/documents/${id}/upload${options.query ?? ""}`, {
    token: options.token ?? admin,
    rawBody: Buffer.isBuffer(data) ? new Uint8Array(data) : data,
    params: { id },
    headers: { "content-type": options.type ?? "application/octet-stream", ...options.headers },
  });
}
/** Fetches the signed URL through the real signed-file route and returns the bytes. */
async function fetchSigned(url: string) {
  const target = new URL(url);
  const res = await call(signedFile.GET, "GET", target.pathname + target.search);
  return res;
}
async function downloadBytes(url: string): Promise<Buffer> {
  const target = new URL(url);
  const { NextRequest } = await import("next/server");
  const res = await signedFile.GET(new NextRequest(target), { params: Promise.resolve({}) });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe("documents API", () => {
  let files: Record<"pdf" | "docx" | "csv" | "txt", Buffer>;
  beforeAll(async () => {
    files = { pdf: await pdfFile(), docx: await docxFile(), csv: csvFile(), txt: txtFile() };
  });

  it("reports upload constraints to any signed-in user", async () => {
    const res = await call(constraints.GET, "GET", "/api/v1/documents/upload-constraints", { token: analyst });
    expect(res.status).toBe(200);
    expect(res.json.max_bytes).toBe(MAX_BYTES);
    expect(res.json.types.map((t: { extension: string }) => t.extension)).toEqual(["pdf", "docx", "txt", "csv"]);
    expect(res.json.accept).toContain(".docx");
    expect((await call(constraints.GET, "GET", "/api/v1/documents/upload-constraints")).status).toBe(401);
  });

  it("creates records with sanitized names; refuses other types, lying types and non-admins", async () => {
    const res = await create("../../etc/Résumé\u0000 報告.PDF", { tags: ["HR", "hr", " policies "], description: "CV" });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ filename: "Résumé 報告.PDF", title: "Résumé 報告", extension: "pdf", content_type: "application/pdf", status: "created", tags: ["hr", "policies"], size_bytes: null, org_id: "org_acme", created_by: "usr_acme_admin" });
    expect(res.json.id).toMatch(/^doc_[0-9a-f]{24}$/);

    expect((await create("tool.exe")).json.detail).toMatch(/\.exe are not accepted; allowed: \.pdf, \.docx, \.txt, \.csv/);
    expect((await create("tool.exe")).status).toBe(415);
    expect((await create("noextension")).status).toBe(415);
    const lying = await create("report.pdf", { content_type: "image/png" });
    expect(lying.status).toBe(415);
    expect(lying.json.detail).toMatch(/'image\/png' does not match a \.pdf file/);
    const nothing = await create("../..//");
    expect(nothing.status).toBe(422);
    expect(nothing.json.detail[0].loc).toEqual(["body", "filename"]);
    expect((await create("a.pdf", { tags: [""] })).status).toBe(422);
    expect((await create("a.pdf", {}, analyst)).status).toBe(403);
    expect((await call(collection.POST, "POST", "/api/v1/documents", { token: admin, rawBody: "filename=a.pdf", headers: { "content-type": "application/x-www-form-urlencoded" } })).status).toBe(415);
  });

  it("uploads each type, stores its checksum, and downloads it back byte-identical through a signed URL", async () => {
    for (const [type, name] of [["pdf", "Quarterly report.pdf"], ["docx", "Policy.docx"], ["csv", "revenue.csv"], ["txt", "notes.txt"]] as const) {
      const created = await create(name);
      const id = created.json.id as string;
      const res = await put(id, files[type]);
      expect(res.status, res.text).toBe(200);
      expect(res.json).toMatchObject({ status: "uploaded", size_bytes: files[type].length, checksum_sha256: sha256(files[type]), uploaded_by: "usr_acme_admin", index_stale: false });
      expect(storedObjects("org_acme", id)).toHaveLength(1);

      const link = await call(download.GET, "GET", `/api/v1/documents/${id}/download`, { token: analyst, params: { id } });
      expect(link.status).toBe(200);
      expect(link.json).toMatchObject({ filename: name, size_bytes: files[type].length, checksum_sha256: sha256(files[type]) });
      expect(new Date(link.json.expires_at).getTime()).toBeGreaterThan(Date.now());
      const bytes = await downloadBytes(link.json.url);
      expect(sha256(bytes)).toBe(sha256(files[type]));
    }
  });

  it("serves signed files with safe headers and refuses tampered links", async () => {
    const id = (await create("naïve ../name.txt")).json.id as string;
    await put(id, files.txt, { type: "text/plain; charset=utf-8" });
    const { url } = (await call(download.GET, "GET", `/api/v1/documents/${id}/download`, { token: admin, params: { id } })).json;
    const ok = await fetchSigned(url);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-disposition")).toBe(`attachment; filename="name.txt"; filename*=UTF-8''name.txt`);
    expect(ok.headers.get("x-content-type-options")).toBe("nosniff");
    const tampered = new URL(url);
    tampered.searchParams.set("org", "org_globex");
    expect((await fetchSigned(tampered.toString())).status).toBe(403);
    const renamed = new URL(url);
    renamed.searchParams.set("name", "evil.html");
    expect((await fetchSigned(renamed.toString())).status).toBe(403);
    expect((await fetchSigned("http://localhost:3000/api/v1/documents/signed-file")).status).toBe(422);
  });

  it("serves inline links (citations open a PDF at its page) only when the signature says inline", async () => {
    const id = (await create("manual.pdf")).json.id as string;
    await put(id, files.pdf, { type: "application/pdf" });
    const link = await call(download.GET, "GET", `/api/v1/documents/${id}/download?disposition=inline`, { token: analyst, params: { id } });
    expect(link.status).toBe(200);
    const inline = await fetchSigned(link.json.url);
    expect(inline.status).toBe(200);
    expect(inline.headers.get("content-disposition")).toBe(`inline; filename="manual.pdf"; filename*=UTF-8''manual.pdf`);
    expect(inline.headers.get("content-type")).toBe("application/pdf");

    const { url } = (await call(download.GET, "GET", `/api/v1/documents/${id}/download`, { token: analyst, params: { id } })).json;
    const promoted = new URL(url);
    promoted.searchParams.set("disposition", "inline");
    expect((await fetchSigned(promoted.toString())).status).toBe(403);
    const demoted = new URL(link.json.url);
    demoted.searchParams.delete("disposition");
    expect((await fetchSigned(demoted.toString())).status).toBe(403);

    const bad = await call(download.GET, "GET", `/api/v1/documents/${id}/download?disposition=open`, { token: analyst, params: { id } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(["query", "disposition"]);
  });

  it("refuses lying content with 415 and leaves the record and storage untouched", async () => {
    const pdf = (await create("fake.pdf")).json.id as string;
    const asZip = await put(pdf, files.docx);
    expect(asZip.status).toBe(415);
    expect(asZip.json.detail).toMatch(/not a PDF/);
    const docx = (await create("fake.docx")).json.id as string;
    expect((await put(docx, await zipWithoutWord())).json.detail).toMatch(/without word\/document\.xml/);
    const txt = (await create("binary.txt")).json.id as string;
    expect((await put(txt, Buffer.from([0x68, 0x69, 0x00, 0x01]))).status).toBe(415);
    expect((await put(pdf, files.pdf, { type: "image/png" })).status).toBe(415);
    // A multipart form (curl -F file=@…) is not the file's bytes: 415, as the README's upload example says (issue 32).
    const form = `--b\r\nContent-Disposition: form-data; name="file"; filename="fake.pdf"\r\nContent-Type: application/pdf\r\n\r\n`;
    const multipart = await put(pdf, Buffer.concat([Buffer.from(form), files.pdf, Buffer.from("\r\n--b--\r\n")]), { type: "multipart/form-data; boundary=b" });
    expect(multipart.status).toBe(415);
    for (const id of [pdf, docx, txt]) {
      const record = await call(one.GET, "GET", `/api/v1/documents/${id}`, { token: admin, params: { id } });
      expect(record.json).toMatchObject({ status: "created", size_bytes: null, checksum_sha256: null });
      expect(storedObjects("org_acme", id)).toEqual([]);
    }
  });

  it("answers a refused upload over a real socket while the client is still sending", async () => {
    const id = (await create("socket.pdf")).json.id as string;
    // A minimal HTTP server handing the request stream to the route, as Next does.
    const server = http.createServer(async (req, res) => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
      const body = Readable.toWeb(req) as unknown as BodyInit;
      const request = new NextRequest(new URL(req.url!, "http://127.0.0.1"), { method: "POST", headers, body, duplex: "half" } as ConstructorParameters<typeof NextRequest>[1]);
      const response = await upload.POST(request, { params: Promise.resolve({ id }) });
      res.writeHead(response.status, { "content-type": "application/json" });
      res.end(await response.text());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    const lying = Buffer.concat([Buffer.from("PK\x03\x04"), Buffer.alloc(200 * 1024, 1)]);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port, method: "POST", path: `/api/v1/documents/${id}/upload`, headers: { authorization: `Bearer ${admin}`, "content-type": "application/pdf", "content-length": lying.length } }, (res) => {
        let body = "";
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      });
      req.on("error", reject);
      // Send slowly so the refusal comes mid-upload.
      let at = 0;
      const next = () => {
        if (at >= lying.length) return void req.end();
        req.write(lying.subarray(at, (at += 16 * 1024)));
        setTimeout(next, 2);
      };
      next();
    });
    server.close();
    expect(answer.status).toBe(415);
    expect(JSON.parse(answer.body).detail).toMatch(/not a PDF/);
  });

  it("refuses empty and oversized files (declared or streamed) without storing anything", async () => {
    const id = (await create("big.txt")).json.id as string;
    const empty = await put(id, Buffer.alloc(0));
    expect(empty.status).toBe(422);
    expect(empty.json.detail[0].msg).toMatch(/empty/);
    const declared = await put(id, "x", { headers: { "content-length": String(MAX_BYTES + 1) } });
    expect(declared.status).toBe(413);
    // No Content-Length: the limit is enforced while streaming.
    const chunk = Buffer.alloc(64 * 1024, "a");
    let sent = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > MAX_BYTES * 4) controller.close();
        else controller.enqueue(chunk);
        sent += chunk.length;
      },
    });
    const streamed = await put(id, endless);
    expect(streamed.status).toBe(413);
    expect(streamed.json.detail).toMatch(/larger than the limit of 262144 bytes/);
    // Reading stopped soon after the limit (stream read-ahead aside), long before the body ended.
    expect(sent).toBeLessThan(MAX_BYTES * 3);
    expect(storedObjects("org_acme", id)).toEqual([]);
    expect((await call(one.GET, "GET", `/api/v1/documents/${id}`, { token: admin, params: { id } })).json.status).toBe("created");
  });

  it("answers 413, not 500, when the storage singleton was built by another bundled copy of the storage module", async () => {
    // Next.js bundles route handlers separately; the globalThis storage then throws the error classes of the
    // bundle that built it. A second module instance (a different id for vite) stands for that other bundle.
    const other = (await import(/* @vite-ignore */ `${path.join(process.cwd(), "lib/storage/object-storage.ts")}?other-bundle`)) as typeof import("@/lib/storage/object-storage");
    const { ObjectTooLargeError } = await import("@/lib/storage/object-storage");
    expect(other.ObjectTooLargeError).not.toBe(ObjectTooLargeError);
    const { objectStorage, objectStorageSingleton } = await import("@/lib/storage/provider");
    const real = objectStorage();
    objectStorageSingleton.set(
      Object.assign(Object.create(real) as typeof real, {
      putStream: (...args: Parameters<typeof real.putStream>) =>
        real.putStream(...args).catch((error: unknown) => {
          throw (error as Error).name === "ObjectTooLargeError" ? new other.ObjectTooLargeError(args[2].maxBytes) : error;
        }),
      }),
    );
    try {
      const id = (await create("other-bundle.txt")).json.id as string;
      const big = Buffer.alloc(MAX_BYTES + 64 * 1024, "a");
      // Chunked (no Content-Length): caught while streaming, by the storage write.
      const chunked = await put(id, Readable.toWeb(Readable.from([big.subarray(0, MAX_BYTES), big.subarray(MAX_BYTES)])) as ReadableStream<Uint8Array>);
      expect(chunked.status).toBe(413);
      expect(chunked.json.detail).toMatch(/larger than the limit/);
      // With an honest Content-Length over the limit: refused before reading.
      expect((await put(id, big, { headers: { "content-length": String(big.length) } })).status).toBe(413);
      expect(storedObjects("org_acme", id)).toEqual([]);
    } finally {
      objectStorageSingleton.set(real);
    }
  });

  it("keeps nothing of an upload whose connection drops halfway", async () => {
    const id = (await create("dropped.txt")).json.id as string;
    const first = await put(id, files.txt);
    expect(first.status).toBe(200);
    let pulls = 0;
    const dropping = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (++pulls > 3) controller.error(new Error("socket hang up"));
        else controller.enqueue(Buffer.alloc(16 * 1024, "b"));
      },
    });
    const res = await put(id, dropping);
    expect(res.status).toBe(400);
    expect(res.json.detail).toMatch(/interrupted/);
    // A body that ends quietly short of its Content-Length is a dropped upload too.
    const short = await put(id, Buffer.alloc(1000, "c"), { headers: { "content-length": "5000" } });
    expect(short.status).toBe(400);
    const record = await call(one.GET, "GET", `/api/v1/documents/${id}`, { token: admin, params: { id } });
    expect(record.json.checksum_sha256).toBe(sha256(files.txt));
    expect(storedObjects("org_acme", id)).toHaveLength(1);
    expect(fs.readdirSync(path.join(process.env.QUARRY_DATA_DIR!, "objects", ".tmp"))).toEqual([]);
  });

  it("replaces the file on re-upload, removes the old object and marks an index stale", async () => {
    const id = (await create("policy.pdf")).json.id as string;
    await put(id, files.pdf);
    const [oldObject] = storedObjects("org_acme", id);
    await withTenant({ orgId: "org_acme" }, (tx) => tx.document.update({ where: { id }, data: { status: "indexed", chunkCount: 3, indexModel: "local" } }));
    const res = await put(id, files.docx, { query: "?filename=" + encodeURIComponent("policy v2.docx") });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ filename: "policy v2.docx", extension: "docx", status: "uploaded", index_stale: true, checksum_sha256: sha256(files.docx) });
    expect(storedObjects("org_acme", id)).not.toContain(oldObject);
    expect(storedObjects("org_acme", id)).toHaveLength(1);
    expect((await put(id, files.pdf, { query: "?filename=x.exe" })).status).toBe(415);
  });

  it("settles concurrent uploads to one record on one complete file", async () => {
    const id = (await create("race.txt")).json.id as string;
    const bodies = ["first\n", "second\n", "third\n"].map((s) => Buffer.from(s.repeat(5000)));
    const results = await Promise.all(bodies.map((b) => put(id, b)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    const record = (await call(one.GET, "GET", `/api/v1/documents/${id}`, { token: admin, params: { id } })).json;
    const objects = storedObjects("org_acme", id);
    expect(objects).toHaveLength(1);
    const stored = fs.readFileSync(path.join(objectsDir(), "org_acme", id, objects[0]));
    expect(sha256(stored)).toBe(record.checksum_sha256);
    expect(stored.length).toBe(record.size_bytes);
  });

  it("lists with paging and filters by status, type, tag and text", async () => {
    const list = async (query: string, token?: string) => (await call(collection.GET, "GET", `/api/v1/documents${query}`, { token: token ?? admin })).json;
    const created = await create("Handbook 2026.txt", { tags: ["hr"] });
    const all = await list("?limit=2");
    expect(all.items).toHaveLength(2);
    expect(all.items[0].id).toBe(created.json.id);
    expect(all.total).toBeGreaterThan(5);
    expect((await list("?limit=2&offset=2")).items[0].id).not.toBe(all.items[0].id);
    expect((await list("?q=handBOOK")).items.map((d: { id: string }) => d.id)).toEqual([created.json.id]);
    // LIKE wildcards in q are literal characters.
    expect((await list("?q=%25")).total).toBe(0);
    expect((await list("?q=_")).total).toBe(0);
    expect((await list("?tag=HR")).items.map((d: { id: string }) => d.id)).toContain(created.json.id);
    expect((await list("?status=created&type=txt")).items.every((d: { status: string; extension: string }) => d.status === "created" && d.extension === "txt")).toBe(true);
    expect((await call(collection.GET, "GET", "/api/v1/documents?status=lost&limit=0", { token: admin })).status).toBe(422);
    expect((await list("", manager)).total).toBe(all.total);
  });

  it("lets other roles read and download but not upload or delete", async () => {
    const id = (await create("readonly.csv")).json.id as string;
    await put(id, files.csv);
    expect((await call(one.GET, "GET", `/api/v1/documents/${id}`, { token: manager, params: { id } })).status).toBe(200);
    expect((await call(download.GET, "GET", `/api/v1/documents/${id}/download`, { token: manager, params: { id } })).status).toBe(200);
    expect((await put(id, files.csv, { token: analyst })).status).toBe(403);
    expect((await call(one.DELETE, "DELETE", `/api/v1/documents/${id}`, { token: manager, params: { id } })).status).toBe(403);
    const fresh = (await create("nofile.csv")).json.id as string;
    const noFile = await call(download.GET, "GET", `/api/v1/documents/${fresh}/download`, { token: admin, params: { id: fresh } });
    expect(noFile.status).toBe(409);
  });

  it("shows globex nothing of acme: empty lists, 404 for every id", async () => {
    const id = (await create("secret.txt")).json.id as string;
    await put(id, files.txt);
    const list = await call(collection.GET, "GET", "/api/v1/documents", { token: globex });
    expect(list.json).toMatchObject({ items: [], total: 0 });
    expect((await call(collection.GET, "GET", "/api/v1/documents?q=secret", { token: globex })).json.total).toBe(0);
    expect((await call(one.GET, "GET", `/api/v1/documents/${id}`, { token: globex, params: { id } })).status).toBe(404);
    expect((await call(download.GET, "GET", `/api/v1/documents/${id}/download`, { token: globex, params: { id } })).status).toBe(404);
    const overwrite = await put(id, files.txt, { token: globex });
    expect(overwrite.status).toBe(404);
    expect(overwrite.json.detail).toBe("Document not found");
    expect((await call(one.DELETE, "DELETE", `/api/v1/documents/${id}`, { token: globex, params: { id } })).status).toBe(404);
    expect((await call(one.GET, "GET", `/api/v1/documents/${id}`, { token: admin, params: { id } })).json.checksum_sha256).toBe(sha256(files.txt));
  });

  it("deletes record and stored file; the signed link stops working", async () => {
    const id = (await create("gone.pdf")).json.id as string;
    await put(id, files.pdf);
    const { url } = (await call(download.GET, "GET", `/api/v1/documents/${id}/download`, { token: admin, params: { id } })).json;
    const res = await call(one.DELETE, "DELETE", `/api/v1/documents/${id}`, { token: admin, params: { id } });
    expect(res.status).toBe(204);
    expect(storedObjects("org_acme", id)).toEqual([]);
    expect((await call(one.GET, "GET", `/api/v1/documents/${id}`, { token: admin, params: { id } })).status).toBe(404);
    expect((await fetchSigned(url)).status).toBe(404);
    expect((await call(one.DELETE, "DELETE", `/api/v1/documents/${id}`, { token: admin, params: { id } })).status).toBe(404);
  });
});
