import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll } from "vitest";
import { appSecretSingleton } from "@/lib/secrets";
import { issuerKeySingleton } from "@/lib/auth/local-issuer";
import { configSingleton } from "@/lib/config";
import { closeDb } from "@/lib/db/client";
import { TEMPLATE_DB, TEST_DB_PREFIX, createDatabase, databaseUrl, dropDatabase } from "./pg-test-db";
import { TEST_FOLDER_PREFIX, testFolderRoot } from "./test-folders";

// Each test file gets its own copy of the seeded template database and a fresh configuration.
const onPostgres = process.env.QUARRY_TEST_ENGINE === "postgres";
const template = process.env.QUARRY_TEST_TEMPLATE;
if (!onPostgres && !template) throw new Error("QUARRY_TEST_TEMPLATE is not set; run tests through vitest (test/global-setup.ts)");

await closeDb();
const dir = fs.mkdtempSync(path.join(testFolderRoot(), TEST_FOLDER_PREFIX));
const database = `${TEST_DB_PREFIX}${crypto.randomBytes(6).toString("hex")}`;
if (onPostgres) {
  await createDatabase(database, TEMPLATE_DB);
  process.env.DATABASE_URL = databaseUrl(database);
} else {
  fs.cpSync(template!, dir, { recursive: true });
  delete process.env.DATABASE_URL;
}
process.env.QUARRY_DATA_DIR = dir;
process.env.QUARRY_LOG_LEVEL = "silent";
process.env.QUARRY_SECRET = "test-secret-test-secret-test-secret-0123456789";
// Embedded: one engine process per test file; the analytics copy (a second engine) only where a
// test asks for it (test/faults, lib/db/privileges.test.ts), to keep the suite's time and memory.
process.env.QUARRY_EMBEDDED_ANALYTICS = "false";
// Likewise the embedded tsvector calculator (an in-memory PGlite whose first start in a data folder
// runs initdb): the database computes tsvectors, except in the tests of the calculator itself.
process.env.QUARRY_EMBEDDED_TSVECTOR_WORKER = "false";
configSingleton.set(undefined);
appSecretSingleton.set(undefined);
issuerKeySingleton.set(undefined);

afterAll(async () => {
  await closeDb();
  if (onPostgres) await dropDatabase(database);
  fs.rmSync(dir, { recursive: true, force: true });
});
