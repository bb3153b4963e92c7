import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { closeDb } from "@/lib/db/client";

// Each test file gets its own copy of the seeded template database and a fresh configuration.
const template = process.env.QUARRY_TEST_TEMPLATE;
if (!template) throw new Error("QUARRY_TEST_TEMPLATE is not set; run tests through vitest (test/global-setup.ts)");

await closeDb();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-test-"));
fs.cpSync(template, dir, { recursive: true });
process.env.QUARRY_DATA_DIR = dir;
process.env.QUARRY_LOG_LEVEL = "silent";
process.env.QUARRY_SECRET = "test-secret-test-secret-test-secret-0123456789";
delete process.env.DATABASE_URL;
(globalThis as { __quarryConfig?: unknown }).__quarryConfig = undefined;
(globalThis as { __quarrySecret?: unknown }).__quarrySecret = undefined;
(globalThis as { __quarryIssuerKey?: unknown }).__quarryIssuerKey = undefined;

afterAll(async () => {
  await closeDb();
  fs.rmSync(dir, { recursive: true, force: true });
});
