import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { TEMPLATE_DB, TEST_DB_PREFIX, baseDatabase, createDatabase, databaseUrl, leftBehind, quoteIdent, testServerUrl, withMaintenance } from "./pg-test-db";
import { processAlive as alive } from "./support/process-alive";

/**
 * Builds one migrated and seeded database for the whole run (or reuses it while
 * migrations and seed are unchanged, on the day it was seeded); each test file then works on its own
 * copy (test/setup-file.ts). The embedded engine (PGlite) by default; a
 * PostgreSQL server when QUARRY_TEST_ENGINE=postgres (QUARRY_TEST_DATABASE_URL).
 */
export default async function setup() {
  const root = process.cwd();
  const hash = crypto.createHash("sha256");
  for (const file of [...listFiles(path.join(root, "prisma/migrations")), path.join(root, "lib/demo/seed.ts"), path.join(root, "lib/data/demo.ts")].sort()) {
    hash.update(file).update(fs.readFileSync(file));
  }
  // The demo warehouse ends on the day it is seeded (lib/demo/seed.ts), so a template is good for its day only.
  hash.update(new Date().toISOString().slice(0, 10));
  const fingerprint = hash.digest("hex").slice(0, 16);
  if (process.env.QUARRY_TEST_ENGINE === "postgres") {
    await setupPostgres(root, fingerprint);
    return;
  }
  const template = path.join(root, ".data", "test-template", fingerprint);
  if (!fs.existsSync(path.join(template, "ready"))) {
    // Runs side by side in one checkout build the template once, and none removes a template another run still copies.
    await withTemplateLock(path.dirname(template), () => {
      if (fs.existsSync(path.join(template, "ready"))) return;
      removeStaleTemplates(path.dirname(template));
      fs.rmSync(template, { recursive: true, force: true });
      fs.mkdirSync(template, { recursive: true });
      seed(root, { QUARRY_DATA_DIR: template, DATABASE_URL: "" });
      fs.writeFileSync(path.join(template, "ready"), new Date().toISOString());
    });
  }
  process.env.QUARRY_TEST_TEMPLATE = template;
}

/** Templates of other fingerprints unused for an hour (a run that began on one copies it within minutes). */
function removeStaleTemplates(folder: string) {
  for (const entry of fs.existsSync(folder) ? fs.readdirSync(folder) : []) {
    const dir = path.join(folder, entry);
    if (entry !== ".lock" && Date.now() - fs.statSync(dir).mtimeMs > 3_600_000) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One builder at a time: an exclusive lock folder holding its pid, taken over when that process is gone. */
async function withTemplateLock(folder: string, build: () => void) {
  fs.mkdirSync(folder, { recursive: true });
  const lock = path.join(folder, ".lock");
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, "pid"), String(process.pid));
      break;
    } catch {
      const holder = Number(fs.readFileSync(path.join(lock, "pid"), { encoding: "utf8", flag: "a+" }) || 0);
      if (holder > 0 && !alive(holder)) fs.rmSync(lock, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    build();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}


async function setupPostgres(root: string, fingerprint: string) {
  const server = testServerUrl();
  const ready = await withMaintenance(async (client) => {
    // Copies left behind by an interrupted run; not those of another run going on beside this one.
    const copies = await client.query<{ datname: string; comment: string | null }>(
      "SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname LIKE $1 AND datname <> $2",
      [`${TEST_DB_PREFIX}%`, TEMPLATE_DB],
    );
    for (const { datname } of copies.rows.filter((c) => leftBehind(c.comment))) await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(datname)} WITH (FORCE)`);
    const found = await client.query<{ comment: string | null }>("SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1", [TEMPLATE_DB]);
    return found.rows[0]?.comment === fingerprint;
  });
  if (!ready) {
    await createDatabase(TEMPLATE_DB, baseDatabase(server));
    seed(root, { DATABASE_URL: databaseUrl(TEMPLATE_DB, server) });
    await withMaintenance((client) => client.query(`COMMENT ON DATABASE ${quoteIdent(TEMPLATE_DB)} IS '${fingerprint}'`));
  }
  console.log(`vitest on PostgreSQL: ${new URL(server).host}, template database ${TEMPLATE_DB}`);
}

function seed(root: string, env: Record<string, string>) {
  execFileSync(process.execPath, ["node_modules/tsx/dist/cli.mjs", "--conditions=react-server", "scripts/db-seed.ts"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, QUARRY_LOG_LEVEL: "warn", ...env },
  });
}

function listFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}
