// The worker as boot starts it (in_process_worker, the embedded default): an upload is indexed with
// nobody calling POST …/index, and the page's record shows it queued, then done.
import { afterAll, describe, expect, it } from "vitest";
import { startIndexWorker } from "@/lib/documents/indexing/index-jobs";
import { closeQueue } from "@/lib/job-queue";
import { call, tokenFor } from "@/test/helpers";
import * as indexRoute from "./[id]/index/route";
import * as upload from "./[id]/upload/route";
import * as collection from "./route";

afterAll(() => closeQueue());

describe("the index worker", () => {
  it("indexes an uploaded file by itself", async () => {
    await startIndexWorker();
    const token = await tokenFor("acme", "admin");
    const id = (await call(collection.POST, "POST", "/api/v1/documents", { token, body: { filename: "auto.txt" } })).json.id as string;
    const uploaded = await call(upload.POST, "POST", `/api/v1/documents/${id}/upload`, {
      token,
      params: { id },
      rawBody: new Uint8Array(Buffer.from("Forklift batteries are charged overnight in bay seven. ".repeat(200))),
      headers: { "content-type": "text/plain" },
    });
    // Queued in the upload's own answer; the first poll may already find it running or done (soak round 3 did).
    expect(uploaded.json.index_job).toMatchObject({ state: "queued" });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const status = (await call(indexRoute.GET, "GET", `/api/v1/documents/${id}/index`, { token, params: { id } })).json;
      if (status.state === "done") {
        expect(status).toMatchObject({ status: "indexed", attempts: 1 });
        expect(status.chunk_count).toBeGreaterThan(0);
        break;
      }
      expect(status.state).not.toBe("failed");
      if (Date.now() > deadline) throw new Error(`not indexed in time: ${JSON.stringify(status)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 90_000);
});
