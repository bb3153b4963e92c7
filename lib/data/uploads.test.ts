import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Principal } from "@/lib/access/roles";
import { configSingleton } from "@/lib/config";
import { documentStorageConfig } from "@/lib/config/storage";
import { NotFound } from "@/lib/errors";
import { objectStorage } from "@/lib/storage/provider";
import { tickPulls } from "./pipes/jobs";
import { createUpload, expireUploads, previewUpload } from "./uploads";

process.env.QUARRY_DATA_UPLOAD_TTL_HOURS = "2";
configSingleton.set(undefined);
const TTL_MS = 2 * 3_600_000;

const acme: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };
const globex: Principal = { ...acme, userId: "usr_globex_admin", orgId: "org_globex", orgSlug: "globex", orgName: "Globex" };
const CSV = "day,spend\n2026-01-01,10\n2026-01-02,12.5\n";
const upload = (principal: Principal) =>
  createUpload(principal, { body: Readable.toWeb(Readable.from([Buffer.from(CSV)])) as ReadableStream<Uint8Array>, declaredLength: CSV.length }, { filename: "spend.csv", format: "csv" });
const put = (key: string, text: string) => objectStorage().putStream(key, Readable.from([Buffer.from(text)]), { contentType: "text/plain", maxBytes: 1024 });

async function keysUnder(folder: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of objectStorage().list(folder)) keys.push(object.key.slice(folder.length));
  return keys.sort();
}

describe("abandoned uploads", () => {
  it("are removed by the worker's tick once older than QUARRY_DATA_UPLOAD_TTL_HOURS, in every organization, and nothing else is", async () => {
    const folder = `${documentStorageConfig().storage.prefix}data-uploads/`;
    const made = Date.now();
    const first = await upload(acme);
    const second = await upload(globex);
    // The configured time is the one the upload is told.
    expect(Date.parse(first.expires_at) - made).toBeGreaterThanOrEqual(TTL_MS - 1_000);
    expect(Date.parse(first.expires_at) - Date.now()).toBeLessThanOrEqual(TTL_MS);
    // A file whose description was never written (a process that died between the two), and an object that is no upload.
    const orphan = "upl_0123456789abcdef01234567";
    await put(`${folder}org_acme/${orphan}`, CSV);
    await put(`${folder}org_acme/notes.txt`, "not an upload");

    // Within the time: everything stays, and the upload still previews.
    expect(await expireUploads(new Date(made + TTL_MS - 60_000))).toBe(0);
    expect((await previewUpload(acme, first.id, {})).row_count).toBe(2);

    // Past it: the worker's tick removes the three uploads (file and description), and leaves the stranger alone.
    const tick = await tickPulls({ send: async () => null } as never, new Date(Date.now() + TTL_MS + 60_000));
    expect(tick.expiredUploads).toBe(3);
    expect(await keysUnder(folder)).toEqual(["org_acme/notes.txt"]);
    await expect(previewUpload(acme, first.id, {})).rejects.toBeInstanceOf(NotFound);
    await expect(previewUpload(globex, second.id, {})).rejects.toBeInstanceOf(NotFound);
    expect(await expireUploads(new Date(Date.now() + TTL_MS + 60_000))).toBe(0);
  }, 120_000);
});
