import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { TEMPLATE_DB, TEST_DB_PREFIX, baseDatabase, createDatabase, databaseUrl, leftBehind, quoteIdent, testServerUrl, withMaintenance } from "./pg-test-db";
import { processAlive as alive } from "./support/process-alive";
import { removeLeftBehindTestFolders } from "./test-folders";

/**
 * Builds one migrated and seeded database for the whole run (or reuses it while
 * migrations and seed are unchanged, on the day it was seeded); each test file then works on its own
 * copy (test/setup-file.ts). The embedded engine (PGlite) by default; a
 * PostgreSQL server when QUARRY_TEST_ENGINE=postgres (QUARRY_TEST_DATABASE_URL).
 */
export default async function setup() {
  const root = process.cwd();
  removeLeftBehindTestFolders();
  const hash = crypto.createHash("sha256");
  for (const file of [...listFiles(path.join(root, "prisma/migrations")), path.join(root, "lib/demo/seed.ts"), path.join(root, "lib/data/demo.ts"), path.join(root, "scripts/db-seed.ts"), path.join(root, "lib/db/statistics.ts")].sort()) {
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
      dropFutureWalSegments(path.join(template, "pglite"));
      fs.writeFileSync(path.join(template, "ready"), new Date().toISOString());
    });
  }
  process.env.QUARRY_TEST_TEMPLATE = template;
}

/**
 * Every test file copies the template (test/setup-file.ts), and after the seed more than half of it is WAL segments
 * past the last checkpoint: files PostgreSQL recycled for later use, holding no record (48 of 88 MB). A cleanly shut
 * down engine needs only the segment of its last checkpoint; PostgreSQL creates the later ones when it reaches them.
 * The checkpoint's position is read from global/pg_control (PostgreSQL 17's layout: state at byte 16, the checkpoint's
 * LSN at byte 32, its timeline at byte 48); anything else than a clean shutdown is left as it is.
 */
function dropFutureWalSegments(dataDir: string) {
  const control = fs.readFileSync(path.join(dataDir, "global", "pg_control"));
  const DB_SHUTDOWNED = 1;
  if (control.readUInt32LE(8) !== 1700 || control.readInt32LE(16) !== DB_SHUTDOWNED) return;
  const wal = path.join(dataDir, "pg_wal");
  const segments = fs.readdirSync(wal).filter((name) => /^[0-9A-F]{24}$/.test(name));
  if (!segments.length) return;
  // Every segment has the size initdb chose; the name is timeline, then the segment number in two 8-digit halves.
  const segmentBytes = BigInt(fs.statSync(path.join(wal, segments[0])).size);
  const segmentsPerId = BigInt(0x1_0000_0000) / segmentBytes;
  const checkpointSegment = control.readBigUInt64LE(32) / segmentBytes;
  const hex = (n: bigint | number) => n.toString(16).toUpperCase().padStart(8, "0");
  const kept = `${hex(control.readUInt32LE(48))}${hex(checkpointSegment / segmentsPerId)}${hex(checkpointSegment % segmentsPerId)}`;
  if (!segments.includes(kept)) return;
  for (const name of segments) if (name > kept) fs.rmSync(path.join(wal, name));
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
